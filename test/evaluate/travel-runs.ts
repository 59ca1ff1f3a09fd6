// Runs of the example world's travel desk built event by event in the recorder's shape (HTTP tools as
// tool.called "METHOD /path" with their exchange, in-process tools seen through the tool messages of the
// next model call, world changes in the step that made them). Used until the committed recordings land.
import type { DbSnapshot, Row } from '../../src/recording/index.js';
import { RecordingBuilder } from './recording-builder.js';

const API = 'http://127.0.0.1:8787';
const FLIGHTS = [
  {
    id: 'FL-101',
    airline: 'United',
    flight_no: 'UA 455',
    origin: 'SFO',
    destination: 'DEN',
    depart_date: '2026-11-25',
    depart_time: '07:30',
    fare_class: 'economy',
    price_usd: 279,
    seats_left: 12,
  },
  {
    id: 'FL-102',
    airline: 'Frontier',
    flight_no: 'F9 1021',
    origin: 'SFO',
    destination: 'DEN',
    depart_date: '2026-11-25',
    depart_time: '13:05',
    fare_class: 'basic',
    price_usd: 189,
    seats_left: 4,
  },
];
const PASSENGERS: Row[] = [
  { id: 'P-100', name: 'Priya Natarajan', email: 'priya.natarajan@example.com', home_airport: 'SEA' },
  { id: 'P-102', name: 'Dana Reyes', email: 'dana.reyes@example.com', home_airport: 'SFO' },
];
const TRAVELER = { name: 'Dana Reyes', passenger_id: 'P-102', home_airport: 'SFO' };
const USER = "Today is 2026-11-24. Hi, it's Dana Reyes. Book me a flight to Denver tomorrow under $300.";

/** The travel database: its flights and passengers, with these bookings and notes. */
export function travelDb(bookings: Row[], notes: Row[], seatsTaken = 0): DbSnapshot {
  const cols = (names: string[]) => names.map((name) => ({ name, type: 'text', nullable: false }));
  return {
    schemas: ['travel'],
    ddl: [],
    tables: [
      {
        schema: 'travel',
        name: 'flights',
        columns: cols(Object.keys(FLIGHTS[0]!)),
        primaryKey: ['id'],
        rows: FLIGHTS.map((f) => (f.id === 'FL-102' ? { ...f, seats_left: f.seats_left - seatsTaken } : f)),
      },
      {
        schema: 'travel',
        name: 'passengers',
        columns: cols(['id', 'name', 'email', 'home_airport']),
        primaryKey: ['id'],
        rows: PASSENGERS,
      },
      {
        schema: 'travel',
        name: 'bookings',
        columns: cols(['id', 'flight_id', 'passenger_id', 'price_usd', 'status']),
        primaryKey: ['id'],
        rows: bookings,
      },
      {
        schema: 'travel',
        name: 'agent_notes',
        columns: cols(['id', 'booking_id', 'passenger_id', 'note', 'run_id']),
        primaryKey: ['id'],
        rows: notes,
      },
    ],
  };
}

export interface TravelRunOptions {
  /** The fixed prompt's behaviour: read the profile, look the passenger up, verify. */
  fixed: boolean;
  /** Book twice (a retry without checking). */
  bookTwice?: boolean;
  /** A planted unrequested change: the agent also deletes traveler.json at its last tool step. */
  plantSideEffect?: boolean;
  id?: string;
}

export function travelRun(options: TravelRunOptions) {
  const b = new RecordingBuilder(
    options.id ?? (options.fixed ? 'travel-fixed' : 'travel-baseline'),
    options.id ?? 'trace-travel',
  );
  const traveler = `${JSON.stringify(TRAVELER, null, 2)}\n`;
  b.pre = { fs: { files: { 'traveler.json': b.file(traveler) } }, db: travelDb([], []) };
  const system = options.fixed
    ? 'You are TravelDesk. Look up the passenger; use only ids returned by tools.'
    : 'You are TravelDesk.';
  const messages: unknown[] = [{ role: 'user', content: USER }];
  const tools = [
    'search_flights',
    'get_passenger',
    'book_flight',
    'get_booking',
    'read_file',
    'write_file',
    'save_note',
    'search_policies',
  ].map((name) => ({
    type: 'function',
    function: { name, parameters: { type: 'object', properties: {}, required: [] } },
  }));
  let n = 0;
  /** One THINK step with one tool call; `run` records the tool's step (or nothing for an in-process tool) and returns the result text. */
  const act = (name: string, args: Record<string, unknown>, run: (think: number) => string) => {
    const id = `call_${++n}`;
    const think = b.model({ system, messages: [...messages], tools, toolCalls: [{ id, name, arguments: args }] });
    const result = run(think);
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
    });
    messages.push({ role: 'tool', tool_call_id: id, content: result });
    return result;
  };
  const http = (
    think: number,
    method: string,
    path: string,
    body: Record<string, unknown> | undefined,
    result: unknown,
    extra: Parameters<typeof b.tool>[1] = { name: '', args: {} },
  ) => {
    b.tool(think, {
      ...extra,
      name: `${method} ${path.split('?')[0]}`,
      stateType: method === 'GET' ? (path.startsWith('/policies') ? 'RETRIEVE' : 'API_CALL') : 'API_CALL',
      args: body ?? {},
      result,
      mutating: method !== 'GET',
      http: { method, url: `${API}${path}`, ...(body ? { body } : {}) },
    });
    return JSON.stringify(result);
  };

  act('search_flights', { to: 'DEN', date: '2026-11-25', max_price: 300 }, (t) =>
    http(t, 'GET', '/flights?to=DEN&date=2026-11-25&max_price=300', undefined, { flights: FLIGHTS }),
  );
  let passengerId = 'P-100';
  let passengerName = 'Dana Reyes';
  if (options.fixed) {
    act('read_file', { path: 'traveler.json' }, () => traveler);
    act('get_passenger', { passenger_id: 'P-102' }, (t) =>
      http(t, 'GET', '/passengers/P-102', undefined, { passenger: PASSENGERS[1] }),
    );
    passengerId = 'P-102';
    passengerName = 'Dana Reyes';
  }
  const paxName = passengerId === 'P-102' ? 'Dana Reyes' : 'Priya Natarajan';
  const booking = {
    id: 'BK-0001',
    flight_id: 'FL-102',
    passenger_id: passengerId,
    price_usd: 189,
    status: 'confirmed',
  };
  const bookingView = {
    ...booking,
    passenger_name: paxName,
    flight_no: 'F9 1021',
    depart_date: '2026-11-25',
    depart_time: '13:05',
  };
  const bookings: Row[] = [booking];
  act('book_flight', { flight_id: 'FL-102', passenger_id: passengerId }, (t) =>
    http(
      t,
      'POST',
      '/bookings',
      { flight_id: 'FL-102', passenger_id: passengerId },
      { booking: bookingView },
      {
        name: '',
        args: {},
        db: [
          {
            schema: 'travel',
            table: 'flights',
            op: 'update',
            key: { id: 'FL-102' },
            before: FLIGHTS[1]!,
            after: { ...FLIGHTS[1]!, seats_left: 3 },
          },
          { schema: 'travel', table: 'bookings', op: 'insert', key: { id: 'BK-0001' }, after: booking },
        ],
      },
    ),
  );
  if (options.bookTwice) {
    const second = { ...booking, id: 'BK-0002' };
    bookings.push(second);
    act('book_flight', { flight_id: 'FL-102', passenger_id: passengerId }, (t) =>
      http(
        t,
        'POST',
        '/bookings',
        { flight_id: 'FL-102', passenger_id: passengerId },
        { booking: { ...bookingView, id: 'BK-0002' } },
        {
          name: '',
          args: {},
          db: [
            {
              schema: 'travel',
              table: 'flights',
              op: 'update',
              key: { id: 'FL-102' },
              before: { ...FLIGHTS[1]!, seats_left: 3 },
              after: { ...FLIGHTS[1]!, seats_left: 2 },
            },
            { schema: 'travel', table: 'bookings', op: 'insert', key: { id: 'BK-0002' }, after: second },
          ],
        },
      ),
    );
  }
  if (options.fixed)
    act('get_booking', { booking_id: 'BK-0001' }, (t) =>
      http(t, 'GET', '/bookings/BK-0001', undefined, { booking: bookingView }),
    );
  const confirmation = `# Booking BK-0001\n\nPassenger: ${passengerName} (${passengerId})\nFlight: Frontier F9 1021 from SFO to DEN on 2026-11-25 at 13:05\nPrice: $189\nStatus: confirmed\n`;
  act('write_file', { path: 'confirmations/BK-0001.md', content: confirmation }, (t) => {
    // In-process file write: the recorder sees the fs change in a step of its own, no tool.called.
    b.tool(t, {
      name: 'file changes',
      stateType: 'FILE_WRITE',
      args: {},
      fs: [{ path: 'confirmations/BK-0001.md', op: 'create', content: confirmation }],
    });
    return JSON.stringify({ ok: true });
  });
  const note = {
    id: 'N-BK-0001',
    booking_id: 'BK-0001',
    passenger_id: passengerId,
    note: `Booked F9 1021 for ${passengerName} at $189.`,
    run_id: 'r1',
  };
  act('save_note', { booking_id: 'BK-0001', passenger_id: passengerId, note: note.note }, (t) => {
    b.tool(t, {
      name: 'database changes',
      stateType: 'DB_QUERY',
      args: {},
      db: [{ schema: 'travel', table: 'agent_notes', op: 'insert', key: { id: 'N-BK-0001' }, after: note }],
      ...(options.plantSideEffect ? { fs: [{ path: 'traveler.json', op: 'delete' as const }] } : {}),
    });
    return JSON.stringify({ ok: true, note_id: 'N-BK-0001' });
  });
  const answer = `Booked Frontier F9 1021 from SFO to DEN on 2026-11-25 at 13:05 for ${passengerName} (${passengerId}) — $189. Confirmation: BK-0001.${options.fixed ? ' I verified the booking: it is confirmed.' : ''}`;
  b.model({ system, messages: [...messages], text: answer });
  const files: Record<string, ReturnType<typeof b.file>> = { 'confirmations/BK-0001.md': b.file(confirmation) };
  if (!options.plantSideEffect) files['traveler.json'] = b.file(traveler);
  b.post = { fs: { files }, db: travelDb(bookings, [note], bookings.length) };
  b.complete(answer);
  return b.build();
}
