// A small real tool API on 127.0.0.1 (not a fake: a plain node:http service) that the agents'
// function tools call with fetch. It counts its hits so tests can prove a replay never reached it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WeatherApi {
  url: string;
  hits(): number;
  close(): Promise<void>;
}

const FORECASTS: Record<string, { tempC: number; sky: string }> = {
  paris: { tempC: 18, sky: 'cloudy' },
  oslo: { tempC: 4, sky: 'snow' },
  lima: { tempC: 22, sky: 'sunny' },
};

/** `delayMs`: how long it takes to answer (a slow API: the agent's other work goes on meanwhile). */
export async function startWeatherApi(options: { delayMs?: number } = {}): Promise<WeatherApi> {
  let hits = 0;
  const server = http.createServer((req, res) => {
    hits++;
    setTimeout(() => answer(req, res), options.delayMs ?? 0);
  });
  const answer = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://weather');
    const city = (url.searchParams.get('city') ?? '').toLowerCase();
    const forecast = FORECASTS[city];
    if (req.method !== 'GET' || url.pathname !== '/forecast' || forecast === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `no forecast for ${JSON.stringify(city)}` }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ city, ...forecast }));
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits: () => hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
