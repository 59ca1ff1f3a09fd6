// `tapedeck import --otlp FILE | --har FILE`: a recording from another tool's traces — GenAI spans
// of a run traced in production, or a HAR archive — that replay, bisect, eval and ledger take.
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { newRecordingId } from '../../record/recorder.js';
import { exitOnUsageError, TapedeckError } from '../../recording/errors.js';
import { writeOut } from '../output.js';

interface ImportOptions {
  otlp?: string;
  har?: string;
  trace?: string;
  out?: string;
  name?: string;
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command('import')
    .exitOverride(exitOnUsageError)
    .description(
      "Turns traces from elsewhere into a recording. --otlp: OTLP/JSON traces (a collector's file export, or what an OpenTelemetry SDK exporter sends) holding GenAI spans with message content captured — as the semantic conventions define them (gen_ai.input.messages / gen_ai.output.messages, or one event per message), as OpenLLMetry writes them (gen_ai.prompt.N.*, gen_ai.completion.N.*) — becomes a recording of the model calls (request rebuilt from the messages, response from the output, usage with cache and reasoning tokens) and the tool calls (execute_tool spans, or the results later model inputs carry). Replay serves the model calls to the unchanged agent, matched by what the conversation says, and its tool() calls from the tool results. Spans carry no world: the recording has no file or database snapshots, so replay cannot sandbox them from a snapshot and bisect cannot time-travel the world. --har: a HAR 1.2 archive becomes a recording of its HTTP exchanges (model calls decoded as the recorder decodes them).",
    )
    .option('--otlp <file>', 'OTLP/JSON traces file (or JSON lines of them)')
    .option('--har <file>', 'HAR 1.2 archive')
    .option(
      '--trace <id>',
      'the trace to import when the file holds several (default: the one with the most model calls)',
    )
    .option('--out <dir>', 'the new recording folder (default: recordings/<name>-<time>-<random>/)')
    .option('--name <name>', 'the recording’s name (default: the agent or service name in the spans)')
    .option('--json', 'print what was imported as JSON')
    .addHelpText(
      'after',
      `
Examples:
  tapedeck import --otlp traces.json --out recordings/prod-run-1
  tapedeck replay recordings/prod-run-1 -- node agent.js           the agent against the traced answers
  tapedeck bisect recordings/prod-run-1
  tapedeck import --har session.har --out recordings/from-browser`,
    )
    .action(async (opts: ImportOptions) => {
      if ((opts.otlp === undefined) === (opts.har === undefined))
        throw new TapedeckError('BAD_OPTION', 'give one of --otlp <file> or --har <file>');
      const name = opts.name ?? 'imported';
      const out = resolve(opts.out ?? `recordings/${newRecordingId(name)}`);
      if (opts.otlp !== undefined) {
        const { otlpToRecording, readOtlpFile } = await import('../../interop/index.js');
        const result = await otlpToRecording(readOtlpFile(opts.otlp), {
          out,
          ...(opts.trace ? { traceId: opts.trace } : {}),
          ...(opts.name ? { name: opts.name } : {}),
        });
        if (opts.json) writeOut(`${JSON.stringify(result, null, 2)}\n`);
        else
          writeOut(
            `${result.dir}: trace ${result.traceId}, ${result.modelCalls} model calls, ${result.toolCalls} tool calls${result.derivedToolCalls ? ` (${result.derivedToolCalls} taken from later model inputs)` : ''}\nnote: spans carry no world (files, databases): the recording has no snapshots to sandbox or time-travel\n`,
          );
        return;
      }
      const { harToRecording, readHarFile } = await import('../../interop/index.js');
      const result = await harToRecording(readHarFile(opts.har as string), {
        out,
        ...(opts.name ? { name: opts.name } : {}),
      });
      if (opts.json) writeOut(`${JSON.stringify(result, null, 2)}\n`);
      else writeOut(`${result.dir}: ${result.exchanges} HTTP exchanges (${result.modelCalls} model calls)\n`);
    });
}
