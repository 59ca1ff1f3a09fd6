import { describe, expect, it } from 'vitest';
import { isTapedeckError } from '../recording/errors.js';
import { loadContract, parseContract } from './contract.js';

function errorOf(text: string): string {
  try {
    parseContract(text, 'c.yaml');
  } catch (error) {
    if (isTapedeckError(error)) return error.message;
    throw error;
  }
  throw new Error('accepted a bad contract');
}

describe('contracts', () => {
  it("loads the example world's contract in the seed's form", () => {
    const c = loadContract('examples/contracts/book-flight.yaml');
    expect(c.task_id).toBe('travel_book_flight_001');
    expect(c.success_criteria.execution_result?.required).toBe(true);
    expect(c.success_criteria.execution_result?.must_not_include).toContain('duplicate_execution');
    expect(c.expected_state?.rows?.[0]?.table).toBe('travel.bookings');
  });

  it('names line and column of a wrong type, an unknown key, a missing field, bad YAML and a bad regex', () => {
    expect(errorOf('task_id: t\nsuccess_criteria:\n  must_include: 3\n')).toBe(
      'c.yaml:3:17: success_criteria.must_include: Invalid input: expected array, received number',
    );
    expect(errorOf('task_id: t\nsuccess_criteria: {}\nexpected_state:\n  rowz: []\n')).toMatch(
      /^c\.yaml:4:3: expected_state\.rowz: unknown key rowz/,
    );
    expect(errorOf('success_criteria: {}\n')).toMatch(/^c\.yaml:1:1: task_id: required field is missing/);
    expect(errorOf('task_id: [\n')).toMatch(/^c\.yaml:2:1: invalid YAML/);
    expect(errorOf('task_id: t\nsuccess_criteria: {}\nfields:\n  id: "(["\n')).toBe(
      'c.yaml:4:7: fields.id: not a valid regular expression',
    );
  });

  it('names a misspelt required key as the typo it is, not as the field it left missing', () => {
    expect(errorOf('task_id: t\nsucess_criteria: {}\n')).toBe(
      'c.yaml:2:1: sucess_criteria: unknown key sucess_criteria (did you mean success_criteria?)',
    );
    expect(errorOf('Task_ID: t\nsuccess_criteria: {}\n')).toMatch(
      /^c\.yaml:1:1: Task_ID: unknown key Task_ID \(did you mean task_id\?\)/,
    );
    expect(errorOf('task_id: t\nsuccess_criteria:\n  execution_result:\n    requird: true\n')).toMatch(
      /execution_result\.requird: unknown key requird/,
    );
    // Nowhere near a missing field: the missing field is the problem.
    expect(errorOf('notes: x\nsuccess_criteria: {}\n')).toMatch(/unknown key notes|task_id: required field is missing/);
  });

  it('refuses a code in must_not_include that names none (a misspelling would check nothing), naming the nearest', () => {
    const contract = (list: string, rules = '') =>
      `task_id: t\nsuccess_criteria:\n  must_not_include: [${list}]\n${rules}`;
    expect(errorOf(contract('FABRICATED_REFERENCE, UNSUPORTED_CLAIM'))).toMatch(
      /^c\.yaml:3:44: success_criteria\.must_not_include\.1: UNSUPORTED_CLAIM is not a failure code \(did you mean UNSUPPORTED_CLAIM\?\)/,
    );
    expect(
      errorOf('task_id: t\nsuccess_criteria:\n  execution_result:\n    must_not_include: [DUPLICATE_EXECUTON]\n'),
    ).toMatch(
      /execution_result\.must_not_include\.0: DUPLICATE_EXECUTON is not a failure code \(did you mean DUPLICATE_EXECUTION\?\)/,
    );
    expect(errorOf(contract('NO_SUCH_THING_HERE'))).toMatch(/NO_SUCH_THING_HERE is not a failure code: /);
    // Codes in any case, a rule's own code, and text (lower case, or one word) are all accepted.
    const rule = 'rules:\n  - id: r\n    description: d\n    failure_reason_code: REFUND_OVER_LIMIT\n';
    expect(() =>
      parseContract(contract('WRONG_FACT, wrong_fact, REFUND_OVER_LIMIT, password, PASSWORD, internal_error', rule)),
    ).not.toThrow();
  });

  it('says when the contract file does not exist', () => {
    expect(() => loadContract('nope/missing.yaml')).toThrow(/contract nope\/missing\.yaml not found/);
  });
});
