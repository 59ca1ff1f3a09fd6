// The mock answerer: msw request handlers from the user's mocks module answer calls to third-party
// APIs the recording cannot serve and no sandbox service re-hosts (payments, email, search). A
// handler can read the recorded exchanges of its endpoint and query the sandbox database through
// the context the module's factory gets.
import type { RequestHandler } from 'msw';
import { importUserModule, type MockContext, type MocksExport } from '../../config/index.js';
import { TapedeckError } from '../../recording/index.js';
import { answerOf } from '../http.js';
import { loadMsw } from './msw.js';
import type { ChainAnswerer } from './types.js';

const HOP_HEADERS = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive']);
const NO_BODY = new Set(['GET', 'HEAD']);

/** Imports a mocks module: its default export, or its `handlers` export. */
export async function loadMocks(file: string): Promise<MocksExport> {
  let mod: Record<string, unknown>;
  try {
    mod = await importUserModule(file);
  } catch (error) {
    throw new TapedeckError(
      'BAD_MOCKS',
      `${file}: cannot load the mocks module: ${(error as Error).message.split('\n')[0]}`,
      {
        cause: error,
      },
    );
  }
  const value = mod.default ?? mod.handlers;
  if (typeof value === 'function' || (Array.isArray(value) && value.every(isHandler))) return value as MocksExport;
  throw new TapedeckError(
    'BAD_MOCKS',
    `${file}: export an array of msw request handlers (export default [http.get(…)]) or a function (ctx) => handlers.`,
  );
}

function isHandler(value: unknown): boolean {
  return value !== null && typeof value === 'object' && typeof (value as { run?: unknown }).run === 'function';
}

/** The answerer for one replay: the module's handlers, built with this replay's context. */
export async function mockAnswerer(mocks: MocksExport, context: MockContext, file: string): Promise<ChainAnswerer> {
  const handlers = typeof mocks === 'function' ? await mocks(context) : mocks;
  if (!Array.isArray(handlers) || !handlers.every(isHandler))
    throw new TapedeckError('BAD_MOCKS', `${file}: the mocks factory must return an array of msw request handlers.`);
  const list = handlers as RequestHandler[];
  return {
    name: 'msw mocks',
    servedFrom: 'mock',
    accepts: (ask, { prefix }) => !prefix && ask.kind === 'http' && !ask.isModel,
    async answer(ask) {
      const headers = new Headers();
      for (const [k, v] of Object.entries(ask.request.headers))
        if (!HOP_HEADERS.has(k.toLowerCase())) headers.set(k, v);
      const request = new Request(ask.request.url, {
        method: ask.request.method,
        headers,
        ...(ask.bytes && !NO_BODY.has(ask.request.method) ? { body: new Uint8Array(ask.bytes) } : {}),
      });
      const started = Date.now();
      let response: Response | undefined;
      try {
        response = await (await loadMsw()).getResponse(list, request);
      } catch (error) {
        return {
          url: ask.request.url,
          started,
          durationMs: Date.now() - started,
          error: { code: 'MOCK_FAILED', message: `a mock handler threw: ${(error as Error).message}` },
        };
      }
      // No handler took it (or one passed it through): the next answerer's turn.
      if (!response || response.headers.get('x-msw-intention') === 'passthrough') return undefined;
      if (response.type === 'error')
        return {
          url: ask.request.url,
          started,
          durationMs: Date.now() - started,
          error: { code: 'ECONNRESET', message: 'the mock answered with a network error (HttpResponse.error())' },
        };
      return answerOf(response, ask.request.url, started);
    },
  };
}
