// Tokens of a model call whose server reported no usage (a stream without
// `stream_options.include_usage`, as LlamaIndex.TS and Mastra's OpenAI-compatible router send): not
// 0, but counted here from what went over the wire with the o200k tokenizer — the request's
// context (its messages and tool definitions) as uncached input, the text and tool calls it wrote
// as output. An estimate, marked as one wherever it is shown (StepLedger.usageEstimated).
import type { ModelCalledPayload } from '../recording/index.js';
import { callSegments } from './context-sources.js';
import type { TokenCounter } from './provenance.js';
import { type TokenBuckets, ZERO_BUCKETS } from './tokens.js';

/** The estimated buckets of a call that reported no usage: no cache or reasoning is claimed. */
export function estimateUsage(
  call: ModelCalledPayload,
  compiled: Record<string, unknown>[],
  counter: TokenCounter,
): TokenBuckets {
  let input = 0;
  for (const segment of callSegments(call, compiled)) input += counter.count(segment.text);
  return { ...ZERO_BUCKETS, uncachedInput: input, output: estimateOutput(call, counter) };
}

/**
 * The o200k count of what the model wrote (its text and tool calls), as far as it reached the agent:
 * the output of a call that reported none, or of a stream cut before its final count
 * (Usage.outputIncomplete), where it is a lower bound.
 */
export function estimateOutput(call: ModelCalledPayload, counter: TokenCounter): number {
  let output = counter.count(call.output.text ?? '');
  for (const tool of call.output.toolCalls) output += counter.count(`${tool.name}${tool.arguments}`);
  return output;
}
