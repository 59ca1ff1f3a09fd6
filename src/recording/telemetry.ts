// What in a run's traffic is the agent's telemetry, not its work: one answer for the recorder
// (OBSERVE steps), the replayer (answered whatever it carries), run alignment, the ledger's tool
// events and the eval trajectory (none of them counts it as the agent's). Readers ask it of the
// recorded request, so recordings made before it was told apart read the same way.

/**
 * The agent's telemetry leaving the process (never its tools): OTLP/HTTP exports (`/v1/traces`,
 * `/v1/metrics`, `/v1/logs`, Langfuse's OTel endpoint), LangSmith's client (`langsmith-js`), the
 * OpenAI Agents SDK's trace ingest, Langfuse's ingestion API and Sentry envelopes. What it carries
 * depends on when its batches flush, so a replay answers it whatever it carries and however often
 * it comes (src/replay/match.ts); its steps are OBSERVE steps, and not the agent's actions
 * (src/bisect/align.ts, src/ledger/step-index.ts, src/evaluate/trajectory.ts).
 */
export function isTelemetry(call: { method: string; url: string | URL; headers?: Record<string, string> }): boolean {
  const agent = Object.entries(call.headers ?? {}).find(([name]) => name.toLowerCase() === 'user-agent')?.[1] ?? '';
  if (/^(?:langsmith-|OTel-OTLP-Exporter-)/i.test(agent)) return true;
  if (call.method.toUpperCase() !== 'POST') return false;
  let path: string;
  try {
    path = (typeof call.url === 'string' ? new URL(call.url) : call.url).pathname;
  } catch {
    return false;
  }
  return TELEMETRY_PATH.test(path);
}
const TELEMETRY_PATH =
  /(?:\/v1\/(?:traces|metrics|logs)|\/v1\/traces\/ingest|\/api\/public\/ingestion|\/api\/\d+\/envelope)\/?$/;
