// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the config's placeholders (${port}, ${sandbox.db}) look like template strings on purpose
// zod schema of the project file: unknown keys are errors (a typo must not silently drop a service).
import * as z from 'zod';
import { SNAPSHOT_NAME, SNAPSHOT_NAME_RULE } from '../postgres/snapshot-name.js';
import { DurationInputSchema } from './duration.js';
import type { TapedeckConfig } from './types.js';

/** `${sandbox.db}`, `${sandbox.files}`, `${port}`, `${env.NAME}`. */
export const PLACEHOLDER = /\$\{([^}]*)\}/g;
const KNOWN_PLACEHOLDER = /^(sandbox\.db|sandbox\.files|port|env\.[A-Za-z_][A-Za-z0-9_]*)$/;

/** The placeholders in `text` that are not known, for the config's error message. */
export function unknownPlaceholders(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1] ?? '').filter((name) => !KNOWN_PLACEHOLDER.test(name));
}

const Templated = z.string().superRefine((text, ctx) => {
  const unknown = unknownPlaceholders(text);
  if (unknown.length > 0)
    ctx.addIssue({
      code: 'custom',
      message: `unknown placeholder \${${unknown[0]}} (known: \${sandbox.db}, \${sandbox.files}, \${port}, \${env.NAME})`,
    });
});

/** An origin: a URL (scheme, host, port), or a placeholder that becomes one at run time. */
const Origin = Templated.refine((text) => text.includes('${') || /^https?:\/\/[^/]+\/?$/.test(text), {
  message: 'expected an origin such as http://127.0.0.1:8787 (scheme, host and port, no path) or ${env.API_URL}',
});

const Env = z.record(z.string(), Templated);
const Ready = Templated.refine((text) => text.startsWith('/') || text.includes('${'), {
  message: 'expected a path on the service, such as /health',
});

const base = {
  name: z.string().min(1).optional(),
  origin: Origin,
  env: Env.optional(),
  ready: Ready.optional(),
  readyTimeoutMs: z.number().int().positive().optional(),
};

const CommandService = z
  .object({
    ...base,
    command: z.union([Templated.min(1), z.array(Templated).min(1)]),
    cwd: Templated.optional(),
  })
  .strict();

const ImageService = z.object({ ...base, image: z.string().min(1), port: z.number().int().min(1).max(65535) }).strict();

const Service = z.union([CommandService, ImageService], {
  error: (issue) =>
    issue.code === 'invalid_union'
      ? 'a service needs `origin` and either `command` (run here) or `image` and `port` (a container)'
      : undefined,
});

const Policy = z.enum(['fail', 'error-response']);

const Simulate = z
  .object({
    endpoint: z.url({ message: 'expected the model endpoint URL, such as http://127.0.0.1:11434/v1' }),
    model: z.string().min(1).optional(),
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected the name of an environment variable')
      .optional(),
    origins: z.array(Origin).optional(),
    allowMutating: z.array(z.string().min(1)).optional(),
    examples: z.number().int().min(0).max(100).optional(),
  })
  .strict();

export const ConfigSchema = z
  .object({
    services: z.array(Service).optional(),
    mocks: z.string().min(1).optional(),
    simulate: Simulate.optional(),
    onMiss: Policy.optional(),
    onMissByTool: z.record(z.string(), Policy).optional(),
    seedSnapshot: z.string().regex(SNAPSHOT_NAME, `expected a snapshot name: ${SNAPSHOT_NAME_RULE}`).optional(),
    snapshotsDir: z.string().min(1).optional(),
    schemaSql: z.array(z.string().min(1).max(4096)).max(100).optional(),
    timeout: DurationInputSchema.optional(),
    wallTimeout: DurationInputSchema.optional(),
  })
  .strict();

// The hand-written types users import and the schema must say the same thing.
type Parsed = z.infer<typeof ConfigSchema>;
const sameShape: [Parsed] extends [TapedeckConfig] ? ([TapedeckConfig] extends [Parsed] ? true : false) : false = true;
void sameShape;
