// What every validator of the mesh receives and returns.
import type { StateDiff } from '../../diff/index.js';
import type { Recording } from '../../recording/index.js';
import type { Contract } from '../contract.js';
import type { Trajectory } from '../trajectory.js';

export interface EvidenceRef {
  /** step | event | field | rule | expectation | citation | citation_not_found | footnote | claim */
  kind: string;
  ref: string;
  stepId?: number;
}

/** One thing a validator found wrong; `hard` findings fail the hard gate. */
export interface Finding {
  code: string;
  hard: boolean;
  message: string;
  stepId?: number;
}

export interface ValidatorContext {
  recording: Recording;
  contract: Contract;
  trajectory: Trajectory;
  state: StateDiff;
  /** Codes named in the contract's must_not_include lists (uppercased): these fail the hard gate. */
  forbiddenCodes: ReadonlySet<string>;
}

export interface ValidatorOutcome {
  validatorName: string;
  validatorType: string;
  /** Which soft sub-score this validator feeds (seed 000 §5), if any. */
  metric?:
    | 'completeness'
    | 'evidence_validity'
    | 'evidence_consistency'
    | 'methodology'
    | 'readability'
    | 'execution_success';
  score: number;
  confidence: number;
  findings: Finding[];
  evidenceRefs: EvidenceRef[];
  message: string;
  evaluatorModel?: string;
}
