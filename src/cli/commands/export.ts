// `tapedeck export <recording> --otlp | --har | --msw`: a recording in another tool's format —
// OpenTelemetry GenAI spans (to a file or a collector), a HAR archive, or msw request handlers.
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { exitOnUsageError, TapedeckError } from '../../recording/errors.js';
import { writeErr, writeOut } from '../output.js';
import { readGivenRecording } from '../read-recording.js';

interface ExportOptions {
  otlp?: boolean;
  otlpEndpoint?: string;
  header?: string[];
  har?: boolean;
  msw?: boolean;
  out?: string;
}

function headersOf(pairs: readonly string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new TapedeckError('BAD_OPTION', `--header ${JSON.stringify(pair)} is not NAME=VALUE`);
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1);
  }
  return out;
}

export function register(program: Command): void {
  program
    .command('export')
    .exitOverride(exitOnUsageError)
    .description(
      "Writes a recording (or a replay) in another tool's format. --otlp: OTLP/JSON traces with the OpenTelemetry GenAI attributes — an invoke_agent span over the run, a chat span per model call (gen_ai.provider.name, request and response model, input and output messages, system instructions, tool definitions, usage with cache read, cache creation and reasoning tokens, finish reasons), an execute_tool span per tool call (name, call id, arguments, result) — for Jaeger, Langfuse, Phoenix or any OTLP collector; --otlp-endpoint sends them there (OTLP/HTTP, JSON). --har: every HTTP exchange as a HAR 1.2 archive (browsers, proxies, HAR viewers). --msw: a module of msw request handlers that answer the recording's calls, for tests that mock by hand.",
    )
    .argument('<recording>', 'a recording or replay folder, or <store>/<id>')
    .option('--otlp', 'OpenTelemetry GenAI spans as OTLP/JSON')
    .option('--otlp-endpoint <url>', 'send the spans to this OTLP/HTTP collector (e.g. http://localhost:4318)')
    .option('--header <name=value...>', 'headers for the collector (e.g. authorization=Bearer …)')
    .option('--har', 'the HTTP exchanges as a HAR 1.2 archive')
    .option('--msw', 'msw request handlers (an ES module) answering the recorded calls')
    .option('--out <file>', 'write here (default: stdout, unless the spans are sent)')
    .addHelpText(
      'after',
      `
Examples:
  tapedeck export recordings/examples/openai-baseline --otlp --out run.otlp.json
  tapedeck export recordings/<run> --otlp --otlp-endpoint http://localhost:4318      to Jaeger / a collector
  tapedeck export recordings/<run> --har --out run.har
  tapedeck export recordings/<run> --msw --out test/handlers.mjs    then: setupServer(...handlers) in a test`,
    )
    .action(async (ref: string, opts: ExportOptions) => {
      const formats = [
        opts.otlp || opts.otlpEndpoint ? 'otlp' : '',
        opts.har ? 'har' : '',
        opts.msw ? 'msw' : '',
      ].filter(Boolean);
      if (formats.length !== 1) throw new TapedeckError('BAD_OPTION', 'choose one format: --otlp, --har or --msw');
      const recording = await readGivenRecording(ref);
      let text: string;
      if (formats[0] === 'otlp') {
        const { recordingToOtlp, sendOtlp } = await import('../../interop/index.js');
        const traces = recordingToOtlp(recording);
        if (opts.otlpEndpoint) {
          await sendOtlp(traces, opts.otlpEndpoint, headersOf(opts.header));
          const spans = traces.resourceSpans.reduce(
            (n, r) => n + (r.scopeSpans ?? []).reduce((m, s) => m + (s.spans?.length ?? 0), 0),
            0,
          );
          writeErr(
            `tapedeck: sent ${spans} spans of trace ${recording.events[0]?.traceId ?? ''} to ${opts.otlpEndpoint}\n`,
          );
          if (!opts.out) return;
        }
        text = `${JSON.stringify(traces, null, 2)}\n`;
      } else if (formats[0] === 'har') {
        const { recordingToHar } = await import('../../interop/index.js');
        text = `${JSON.stringify(recordingToHar(recording), null, 2)}\n`;
      } else {
        const { recordingToMsw } = await import('../../interop/index.js');
        text = recordingToMsw(recording);
      }
      if (opts.out) writeFileSync(opts.out, text);
      else writeOut(text);
    });
}
