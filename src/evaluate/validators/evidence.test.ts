import { describe, expect, it } from 'vitest';
import { RecordingBuilder } from '../../../test/evaluate/recording-builder.js';
import { parseContract } from '../contract.js';
import { evaluateRecording } from '../evaluate.js';
import { citationsIn, footnotesIn } from './evidence.js';

/** A run that observed one document (DOC-7, at a URL) and answers with `answer`. */
function run(answer: string) {
  const b = new RecordingBuilder();
  const doc = '{"id":"DOC-7","url":"https://docs.example.com/paris","text":"cloudy"}';
  const think = b.model({
    messages: [{ role: 'user', content: 'Weather in Paris?' }],
    toolCalls: [{ id: 's', name: 'search', arguments: { q: 'paris' } }],
  });
  b.tool(think, { name: 'search', args: { q: 'paris' }, result: JSON.parse(doc) });
  b.model({ messages: [{ role: 'tool', tool_call_id: 's', content: doc }], text: answer });
  return b.complete(answer).build();
}

const contract = parseContract('task_id: cite_001\nsuccess_criteria: { required_outputs: [final_answer] }');
const evidence = (answer: string) =>
  evaluateRecording(run(answer), contract).validators.find((v) => v.validatorName === 'evidence')!;

describe('what the evidence validator reads as a citation', () => {
  it('reads URLs, prefixed [ref: x] markers and the contract patterns, not other brackets', () => {
    const answer = [
      'FAKE final [You are a weather desk. ]: cloudy.',
      '- [x] checked the forecast',
      '- [ ] booked nothing',
      'See [the forecast](https://docs.example.com/paris) and [ref: DOC-7], [source:NCT01234567].',
    ].join('\n');
    expect(citationsIn(answer, ['NCT\\d{8}'])).toEqual(['https://docs.example.com/paris', 'DOC-7', 'NCT01234567']);
    expect(citationsIn('[You are a weather desk. ] [x] [the forecast] rows[1] [1]')).toEqual([]);
  });

  it('reads numbered footnotes only against the answer’s own references list', () => {
    expect(footnotesIn('It was cloudy [1] and rows[2] too.')).toEqual({ resolved: [], dangling: [] });
    expect(footnotesIn('Cloudy [1], windy [3].\n\n[1] https://docs.example.com/paris\n[2]: DOC-7')).toEqual({
      resolved: ['[1]'],
      dangling: ['[3]'],
    });
  });

  it('passes bracketed prose, a checkbox and a markdown link to an observed URL', () => {
    const v = evidence(
      'FAKE final [You are a weather desk. ]: cloudy.\n- [x] done\nSee [forecast](https://docs.example.com/paris).',
    );
    expect(v.failureReasonCodes).toEqual([]);
    expect(v.evidenceRefs).toEqual([{ kind: 'citation', ref: 'https://docs.example.com/paris', stepId: 2 }]);
  });

  it('fails a real [ref: x] citation to a missing source and names it', () => {
    const v = evidence('Cloudy [ref: DOC-7], per [ref: DOC-99].');
    expect(v.failureReasonCodes).toEqual(['FABRICATED_REFERENCE', 'CITATION_NOT_FOUND']);
    expect(v.evidenceRefs).toContainEqual({ kind: 'citation_not_found', ref: 'DOC-99' });
    expect(v.diagnosticMessage).toBe(
      '"DOC-99" is cited but no recorded observation or request contains it; 1/2 cited sources found among the recorded observations',
    );
  });

  it('fails a footnote with no entry in the references list, naming it', () => {
    const v = evidence('Cloudy [1], windy [2].\n\nReferences:\n[1] https://docs.example.com/paris');
    expect(v.failureReasonCodes).toEqual(['CITATION_NOT_FOUND']);
    expect(v.evidenceRefs).toContainEqual({ kind: 'citation_not_found', ref: '[2]' });
    expect(v.diagnosticMessage).toContain("footnote [2] has no entry in the answer's references list");
  });
});
