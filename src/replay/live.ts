// The live model answerer: in counterfactual mode, a model call the recording cannot serve goes
// to the model endpoint (the host it names, or --model-endpoint). Only model calls, and never in
// the prefix (exact mode, or before fork-at K). A streamed response is read event by event so
// the replay records its chunks with their timing, as the recorder does. An AWS SigV4-signed call
// is signed again with the replayer's own AWS credentials (sigv4.ts).
import type { Answerer, HttpAnswer } from './answer.js';
import { sendRequest } from './http.js';
import { awsCredentials, resignSigV4 } from './sigv4.js';

/** The URL a live model call goes to: the endpoint's origin and path prefix, the request's API path. */
export function retarget(url: string, endpoint: string): string {
  const from = new URL(url);
  const to = new URL(endpoint);
  const prefix = to.pathname.replace(/\/$/, '');
  let rest = from.pathname;
  // http://host/v1 + /v1/chat/completions -> http://host/v1/chat/completions, not /v1/v1/…
  const segments = prefix.split('/').filter(Boolean);
  for (let i = segments.length; i > 0; i--) {
    const tail = `/${segments.slice(segments.length - i).join('/')}`;
    if (rest === tail || rest.startsWith(`${tail}/`)) {
      rest = rest.slice(tail.length);
      break;
    }
  }
  return `${to.origin}${prefix}${rest}${from.search}`;
}

export function liveModelAnswerer(modelEndpoint: string | undefined): Answerer {
  return {
    name: 'live model endpoint',
    servedFrom: 'live',
    accepts: (ask, { mode, prefix }) => mode === 'counterfactual' && !prefix && ask.kind === 'http' && ask.isModel,
    async answer(ask): Promise<HttpAnswer> {
      const url = modelEndpoint ? retarget(ask.request.url, modelEndpoint) : ask.request.url;
      // A SigV4-signed call (Bedrock) is signed again as sent: see sigv4.ts.
      const request = await resignSigV4(ask.request, ask.bytes, url, awsCredentials(process.env));
      return sendRequest(url, request, ask.bytes, {
        failure: (to, reason) => ({ code: 'LIVE_FAILED', message: `live model call to ${to} failed: ${reason}` }),
      });
    },
  };
}
