// What about the agent's runtime differs from the recording's and may make it take another path:
// Node's major version, and the packages that shape what it sends (its LLM SDKs, database drivers,
// ORMs, HTTP clients: manifest.runtime.sdkVersions, looked up as the recorder looked).
import { existsSync } from 'node:fs';
import { agentSdkVersions } from '../record/sdk-versions.js';
import type { Recording } from '../recording/index.js';
import { describeVersionChanges, type VersionChange, versionChanges } from './version-changes.js';

/**
 * Node's major version and the packages' versions, against the recording's: one warning each
 * when they differ; the version changes (a structured field of the result); and the versions
 * found (what the replay's own recording names). The packages are looked up from the agent's
 * entry's folder (as the recorder looked); an entry not on this machine (a server's, replayed
 * elsewhere) from the cwd, as the recorder looks without one.
 */
export function runtimeDrift(
  recording: Recording,
  entry: string | undefined,
  cwd: string,
): { warnings: string[]; sdkVersions: Record<string, string>; versionChanges: VersionChange[] } {
  const recorded = recording.manifest.runtime;
  const warnings: string[] = [];
  const major = (version: string) => /^v?(\d+)\./.exec(version)?.[1];
  if (major(recorded.node) !== undefined && major(recorded.node) !== major(process.version))
    warnings.push(
      `the agent was recorded on Node ${recorded.node} and runs on ${process.version} here: its requests and timing may differ`,
    );
  const now = agentSdkVersions(entry !== undefined && existsSync(entry) ? entry : undefined, cwd);
  const changes = versionChanges(recorded.sdkVersions, now);
  if (changes.length > 0) warnings.push(describeVersionChanges(changes));
  return { warnings, sdkVersions: now, versionChanges: changes };
}

/**
 * A redaction key other than the recording's: the secrets in the agent's requests are replaced by
 * other placeholders than the recorded ones, so those requests do not match.
 */
export function redactionKeyDrift(ours: string, recorded: string): string | undefined {
  if (ours === recorded) return undefined;
  return `the redaction key (${ours}) is not the one the recording was made with (${recorded}): requests carrying secrets will not match; set TAPEDECK_REDACTION_KEY to the recording's key`;
}
