// Belief against world, generically: an action that changes the world targets an entity whose own
// observed attributes conflict with what the task says or what earlier observations established —
// the order it refunds belongs to another customer than the one the user is, the booking is for
// another passenger, the amount is more than the order's total or over the user's budget. Works on
// any schema: entities are observed JSON objects with an id; owners are attributes named after a
// party (customer, owner, account, tenant, passenger, user, …); amounts are amount-like fields.

import { unitsPerMajor } from './currencies.js';
import { mentionsIn } from './mentions.js';
import { currencyField } from './objects.js';
import { idCore, type Mention } from './readings.js';
import { keyWords } from './written.js';

/** Where an observation came from (same ordering as FactSource: known at `bound` when pos <= bound). */
export interface ObservationSource {
  pos: number;
  stepId?: number;
  label: string;
}

/** An object observed with an id: an order, a customer, a passenger record. */
export interface ObservedEntity {
  id: string;
  /** The key the object was found under (`order`, `customers`), if any. */
  wrapper?: string;
  /** The key that holds its id (`id`, `passenger_id`). */
  idKey: string;
  attrs: Record<string, unknown>;
  source: ObservationSource;
}

/** The observed entities of a run by id core, each observation in order. */
export class EntityIndex {
  private readonly byId = new Map<string, ObservedEntity[]>();
  /** Person-like entities (with their own name or email), for finding who the user is. */
  readonly people: ObservedEntity[] = [];

  /** Index the objects of one observation (JSON text; other text is ignored). */
  add(text: string, source: ObservationSource): void {
    const t = text.trimStart();
    if (!t.startsWith('{') && !t.startsWith('[')) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return;
    }
    this.walk(value, undefined, source, 0);
  }

  private walk(value: unknown, wrapper: string | undefined, source: ObservationSource, depth: number): void {
    if (depth > 8) return;
    if (Array.isArray(value)) {
      for (const v of value) this.walk(v, wrapper, source, depth + 1);
      return;
    }
    if (!value || typeof value !== 'object') return;
    const attrs = value as Record<string, unknown>;
    const idKey = identifyingKey(attrs, wrapper);
    if (idKey !== undefined) {
      const entity: ObservedEntity = {
        id: String(attrs[idKey]),
        idKey,
        attrs,
        source,
        ...(wrapper === undefined ? {} : { wrapper }),
      };
      const core = idCore(entity.id);
      const list = this.byId.get(core);
      if (list) list.push(entity);
      else this.byId.set(core, [entity]);
      if (typeof attrs.email === 'string' || typeof attrs.name === 'string') this.people.push(entity);
    }
    for (const [k, v] of Object.entries(attrs)) if (v && typeof v === 'object') this.walk(v, k, source, depth + 1);
  }

  /**
   * The entities with this id as last observed at `bound`: one per kind of object, told apart by the
   * key that holds the id — the order itself (`id`) and a shipment or ticket that names it
   * (`order_id`) are different objects, and a later one of them must not hide the other's
   * attributes. Each is attributed to the first observation that showed it in that state (a tool
   * result, not the model context that repeated it); the most recently observed first.
   */
  latestOfEach(id: string, bound: number): ObservedEntity[] {
    const list = this.byId.get(idCore(id));
    if (!list) return [];
    const best = new Map<string, ObservedEntity>();
    for (const e of list) {
      if (e.source.pos > bound) continue;
      const seen = best.get(e.idKey);
      if (!seen || e.source.pos >= seen.source.pos) best.set(e.idKey, e);
    }
    const out: ObservedEntity[] = [];
    for (const latest of best.values()) {
      const state = stable(latest.attrs);
      let first = latest;
      for (const e of list)
        if (e.idKey === latest.idKey && e.source.pos < first.source.pos && stable(e.attrs) === state) first = e;
      out.push(first);
    }
    return out.sort((a, b) => b.source.pos - a.source.pos);
  }
}

/** JSON with sorted keys: the same object however its keys were ordered. */
function stable(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

/** The key holding an object's own id: `id`, else `<wrapper>_id`, else its first `*_id` key. */
function identifyingKey(attrs: Record<string, unknown>, wrapper: string | undefined): string | undefined {
  const isIdValue = (v: unknown) => (typeof v === 'string' && v.trim() !== '') || typeof v === 'number';
  if (isIdValue(attrs.id)) return 'id';
  if (wrapper !== undefined) {
    const one = singular(wrapper);
    for (const k of Object.keys(attrs)) {
      const w = keyWords(k);
      if (w.length === 2 && w[0] === one && w[1] === 'id' && isIdValue(attrs[k])) return k;
    }
  }
  const first = Object.keys(attrs).find((k) => keyWords(k).at(-1) === 'id' && isIdValue(attrs[k]));
  // A `*_id` key names the object's own id only when nothing else in it looks like a person's or thing's name.
  return first !== undefined && Object.keys(attrs).indexOf(first) <= 1 ? first : undefined;
}

function singular(word: string): string {
  const w = word.toLowerCase();
  if (w.endsWith('ies')) return `${w.slice(0, -3)}y`;
  if (w.endsWith('ses')) return w.slice(0, -2);
  return w.endsWith('s') ? w.slice(0, -1) : w;
}

/** The parties an attribute can name. Owner-like ones are one family: they may name the same person. */
const PARTY = new Set(['customer', 'owner', 'account', 'user', 'client', 'member', 'holder', 'buyer', 'subscriber']);
const ROLES = new Set([
  ...PARTY,
  'tenant',
  'passenger',
  'patient',
  'guest',
  'traveler',
  'traveller',
  'employee',
  'student',
  'recipient',
  'payee',
]);
const FACETS: Record<string, Facet> = { id: 'id', email: 'email', name: 'name', number: 'id', no: 'id', uuid: 'id' };
type Facet = 'id' | 'email' | 'name';

/** An attribute that says who a thing belongs to: role (customer), facet (id) and value. */
interface Party {
  role: string;
  facet: Facet;
  value: string;
  key: string;
}

/** `customer_id` -> customer/id, `ownerEmail` -> owner/email, `tenant` -> tenant/id. */
function partyOfKey(key: string, value: unknown): Party | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const words = keyWords(key);
  const role = words[0];
  if (role === undefined || !ROLES.has(singular(role))) return undefined;
  if (words.length > 2) return undefined;
  const facet: Facet | undefined = words.length === 1 ? facetOfValue(String(value)) : FACETS[words[1]!];
  return facet === undefined ? undefined : { role: singular(role), facet, value: String(value), key };
}

function facetOfValue(value: string): Facet {
  if (/@/.test(value)) return 'email';
  return /\d/.test(value) ? 'id' : 'name';
}

/** The parties an entity names: its owner-like attributes, and nested party objects (`customer: {id, email}`). */
function partiesOf(attrs: Record<string, unknown>): Party[] {
  const out: Party[] = [];
  for (const [k, v] of Object.entries(attrs)) {
    const p = partyOfKey(k, v);
    if (p) out.push(p);
    else if (v && typeof v === 'object' && !Array.isArray(v) && ROLES.has(singular(keyWords(k)[0] ?? ''))) {
      const inner = v as Record<string, unknown>;
      for (const facet of ['id', 'email', 'name'] as const)
        if (typeof inner[facet] === 'string' || typeof inner[facet] === 'number')
          out.push({ role: singular(keyWords(k)[0]!), facet, value: String(inner[facet]), key: `${k}.${facet}` });
    }
  }
  return out;
}

/** A fact about who the user is, or what they want, and where it came from. */
export interface TaskFact {
  role?: string;
  facet: Facet;
  value: string;
  /** "the task", "step 2 (find_customer): the customer whose email the task gives". */
  source: string;
  stepId?: number;
}

function same(facet: Facet, a: string, b: string): boolean {
  if (facet === 'id') return idCore(a) === idCore(b);
  return a.trim().toLowerCase().replace(/\s+/g, ' ') === b.trim().toLowerCase().replace(/\s+/g, ' ');
}

function idPrefix(value: string): string {
  return /^[A-Za-z]+/.exec(value.trim())?.[0]?.toUpperCase() ?? '';
}

/** Can a fact about `fact.role` speak about a party of role `role`? */
function sameParty(role: string, fact: TaskFact, value: string): boolean {
  if (fact.role === role) return true;
  if (fact.facet !== 'id') return fact.role === undefined || (PARTY.has(role) && PARTY.has(fact.role));
  // Ids of different roles are comparable only when they are ids of the same kind (C-1042 vs C-2001).
  return (
    (fact.role === undefined || (PARTY.has(role) && PARTY.has(fact.role))) &&
    idPrefix(fact.value) === idPrefix(value) &&
    idPrefix(value) !== ''
  );
}

const SELF = /\b(?:this is|i am|i'm|it's|it is|my name is|name:)\s+([A-Z][a-z]+(?:[ -][A-Z][a-z'-]+){1,2})/g;
const ROLE_ID = new RegExp(
  `\\b(${[...ROLES].join('|')})\\s*(?:id|number|no\\.?|#)?\\s*(?:is\\s+)?[:#]?\\s*([A-Za-z]*[-_]?\\d[\\w-]*)`,
  'gi',
);
const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;

/** What the task says about who the user is: emails, a self-introduced name, role-labelled ids. */
export function taskFacts(task: string): TaskFact[] {
  const out: TaskFact[] = [];
  for (const m of task.matchAll(EMAIL)) out.push({ facet: 'email', value: m[0], source: 'the task' });
  for (const m of task.matchAll(SELF)) out.push({ facet: 'name', value: m[1]!, source: 'the task' });
  for (const m of task.matchAll(ROLE_ID))
    out.push({ role: singular(m[1]!), facet: 'id', value: m[2]!, source: 'the task' });
  return out;
}

/**
 * Who the user is, from the task and from observed people the task identifies (a customer record
 * whose email the user gave): each such record adds its id, email and name under its role.
 */
export function principalFacts(task: string, entities: EntityIndex, bound: number): TaskFact[] {
  const facts = taskFacts(task);
  const given = facts.filter((f) => f.facet !== 'id');
  for (const person of entities.people) {
    if (person.source.pos > bound) continue;
    const match = given.find((g) => {
      const v = person.attrs[g.facet];
      return typeof v === 'string' && same(g.facet, g.value, v);
    });
    if (!match) continue;
    const role = roleOf(person);
    const source = `${person.source.label}: the ${role ?? 'record'} whose ${match.facet} ${match.value} the task gives`;
    const at = person.source.stepId === undefined ? {} : { stepId: person.source.stepId };
    const add = (facet: Facet, value: unknown) => {
      if (typeof value === 'string' || typeof value === 'number')
        facts.push({ ...(role ? { role } : {}), facet, value: String(value), source, ...at });
    };
    add('id', person.attrs[person.idKey]);
    add('email', person.attrs.email);
    add('name', person.attrs.name);
  }
  return facts;
}

function roleOf(e: ObservedEntity): string | undefined {
  const fromWrapper = e.wrapper === undefined ? undefined : singular(keyWords(e.wrapper)[0] ?? '');
  if (fromWrapper && ROLES.has(fromWrapper)) return fromWrapper;
  const fromKey = keyWords(e.idKey)[0];
  return fromKey && ROLES.has(singular(fromKey)) ? singular(fromKey) : undefined;
}

const AMOUNT_WORDS = new Set(['amount', 'total', 'price', 'cost', 'fare', 'balance', 'subtotal', 'charge', 'refund']);

/**
 * Amount-like values of an object, in major units: millionths and minor units by `unitsPerMajor`,
 * in the currency the object names (`total_minor: 12999` with `currency: "JPY"` is ¥12999, with
 * KWD 12.999), else `fallback` (an action's arguments are in the currency of the entity it acts on).
 */
function amountsOf(attrs: Record<string, unknown>, fallback?: string): Array<{ key: string; value: number }> {
  const out: Array<{ key: string; value: number }> = [];
  const currency = currencyField(attrs) ?? fallback;
  for (const [k, v] of Object.entries(attrs)) {
    const words = keyWords(k);
    if (!words.some((w) => AMOUNT_WORDS.has(w))) continue;
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : NaN;
    if (Number.isFinite(n)) out.push({ key: k, value: n / unitsPerMajor(k, currency) });
  }
  return out;
}

const BOUND_BEFORE = /\b(under|below|less than|up to|at most|max(?:imum)?|no more than|within|budget(?: of| is)?)\s*$/i;

/** Money the task states: exact amounts, and bounds ("under $300"). */
function taskAmounts(task: string): { exact: Mention[]; max: Mention[] } {
  const exact: Mention[] = [];
  const max: Mention[] = [];
  for (const m of mentionsIn(task)) {
    if (m.kind !== 'money' || m.value === undefined) continue;
    if (BOUND_BEFORE.test(task.slice(Math.max(0, m.start - 24), m.start))) max.push(m);
    else exact.push(m);
  }
  return { exact, max };
}

const MUTATING_VERB =
  /^(create|add|insert|update|upsert|set|delete|remove|cancel|book|reserve|issue|refund|pay|charge|send|post|put|patch|submit|transfer|write|save|store|approve|reject|close|open|assign|grant|revoke|place|order|purchase|buy|rebook|modify|change|edit|upload|publish|execute|run|apply|void|credit|debit|schedule|register|enroll|invite|archive|restore|merge|deploy)$/;

/** Whether a tool's name says it changes the world (`issue_refund`, `createOrder`), for calls no recorded step shows. */
export function looksMutating(name: string): boolean {
  const words = keyWords(name);
  if (READ_VERB.test(words[0] ?? '')) return false;
  return words.some((w) => MUTATING_VERB.test(w));
}

const READ_VERB =
  /^(get|list|find|search|read|fetch|lookup|look|query|check|show|describe|view|count|retrieve|load|browse|inspect|verify|validate|preview|estimate|quote)$/;

const COUNTERPARTY = new Set([
  'to',
  'recipient',
  'destination',
  'dest',
  'payee',
  'beneficiary',
  'assignee',
  'invitee',
  'target',
]);

/** An argument path (`$.to_account`, `$.transfer.recipient_id`) naming the other party of an action. */
function isCounterparty(path: string): boolean {
  const key = /\.([^.[\]\s]+)(?:\[\d+\])?(?: \(.*\))?$/.exec(path)?.[1] ?? '';
  return keyWords(key).some((w) => COUNTERPARTY.has(w));
}

/** An action that changes the world, as a predicate sees it. */
export interface MutatingAction {
  step: number;
  /** "THINK decided issue_refund", "API_CALL issue_refund". */
  what: string;
  args: unknown;
  /** What this action may know: observations at pos <= bound. */
  bound: number;
}

export interface Contradiction {
  step: number;
  action: string;
  /** The entity acted on, and where it was observed (absent when the action's own argument conflicts). */
  entity?: { id: string; observedAt?: number; source: string };
  /** The observed attribute (or the action's argument) that conflicts. */
  attribute: { key: string; value: string | number };
  /** The fact it conflicts with, and where that came from. */
  fact: { value: string | number; source: string; stepId?: number };
  message: string;
}

const SHORT = (v: unknown) => JSON.stringify(v);

/** The first contradiction of a mutating action, if any. */
export function findContradiction(
  action: MutatingAction,
  entities: EntityIndex,
  task: string,
  idsOf: (args: unknown) => Array<{ value: string; path: string }>,
): Contradiction | undefined {
  const facts = principalFacts(task, entities, action.bound);
  const args = action.args && typeof action.args === 'object' ? (action.args as Record<string, unknown>) : {};
  const argParties = Object.entries(args).flatMap(([k, v]) => partyOfKey(k, v) ?? []);
  const conflict = (party: Party, against: TaskFact[]): TaskFact | undefined => {
    const relevant = against.filter((f) => f.facet === party.facet && sameParty(party.role, f, party.value));
    if (relevant.length === 0 || relevant.some((f) => same(party.facet, f.value, party.value))) return undefined;
    return relevant[0];
  };
  const at = (e: ObservedEntity) => (e.source.stepId === undefined ? {} : { observedAt: e.source.stepId });

  /** The entity's own attributes against the task, the action's arguments and its amounts. */
  const entityContradiction = (entity: ObservedEntity): Contradiction | undefined => {
    const what = `${entity.wrapper ? `${singular(entity.wrapper)} ` : ''}${entity.id}`;
    for (const party of partiesOf(entity.attrs)) {
      const fact =
        conflict(party, facts) ??
        conflict(
          party,
          argParties.map((a) => ({
            role: a.role,
            facet: a.facet,
            value: a.value,
            source: `its own argument ${a.key}`,
          })),
        );
      if (fact === undefined) continue;
      return {
        step: action.step,
        action: action.what,
        entity: { id: entity.id, ...at(entity), source: entity.source.label },
        attribute: { key: party.key, value: party.value },
        fact: { value: fact.value, source: fact.source, ...(fact.stepId === undefined ? {} : { stepId: fact.stepId }) },
        message: `step ${action.step} (${action.what}) acts on ${what}, whose ${party.key} is ${SHORT(party.value)} (observed at ${entity.source.label}), but ${describe(party, fact)}`,
      };
    }
    // Amounts: more than the entity's own total.
    const totals = amountsOf(entity.attrs);
    for (const arg of amountsOf(args, currencyField(entity.attrs))) {
      if (totals.length === 0 || totals.some((t) => arg.value <= t.value + 0.005)) continue;
      const top = totals.reduce((a, b) => (b.value > a.value ? b : a));
      return {
        step: action.step,
        action: action.what,
        entity: { id: entity.id, ...at(entity), source: entity.source.label },
        attribute: { key: arg.key, value: Number(args[arg.key]) },
        fact: { value: Number(entity.attrs[top.key]), source: `${entity.source.label}: ${what} ${top.key}` },
        message: `step ${action.step} (${action.what}) uses ${arg.key}=${SHORT(args[arg.key])} on ${what}, more than its ${top.key} ${SHORT(entity.attrs[top.key])} (observed at ${entity.source.label})`,
      };
    }
    // Amounts: over the user's budget ("under $300").
    const { max } = taskAmounts(task);
    if (max.length > 0 && totals.length > 0) {
      const limit = Math.min(...max.map((m) => m.value!));
      if (totals.every((t) => t.value > limit + 0.005)) {
        const t = totals[0]!;
        const bound = max.find((m) => m.value === limit)!;
        return {
          step: action.step,
          action: action.what,
          entity: { id: entity.id, ...at(entity), source: entity.source.label },
          attribute: { key: t.key, value: Number(entity.attrs[t.key]) },
          fact: { value: bound.text, source: 'the task' },
          message: `step ${action.step} (${action.what}) acts on ${what}, whose ${t.key} is ${SHORT(entity.attrs[t.key])} (observed at ${entity.source.label}), over the task's limit ${bound.text}`,
        };
      }
    }
    return undefined;
  };

  // 1. The entities the action targets: their owners against who the user is, and against the action's own arguments.
  //    An entity named as the other party (to_account, recipient_id) may well be someone else's.
  for (const used of idsOf(action.args)) {
    if (isCounterparty(used.path)) continue;
    for (const entity of entities.latestOfEach(used.value, action.bound)) {
      const found = entityContradiction(entity);
      if (found) return found;
    }
  }
  // 2. The action's own party arguments against who the user is (a booking for another passenger id).
  for (const party of argParties) {
    const fact = conflict(party, facts);
    if (fact === undefined) continue;
    return {
      step: action.step,
      action: action.what,
      attribute: { key: party.key, value: party.value },
      fact: { value: fact.value, source: fact.source, ...(fact.stepId === undefined ? {} : { stepId: fact.stepId }) },
      message: `step ${action.step} (${action.what}) uses ${party.key}=${SHORT(party.value)}, but ${describe(party, fact)}`,
    };
  }
  // 3. Amount arguments against an exact amount the task states.
  const { exact } = taskAmounts(task);
  for (const arg of amountsOf(args)) {
    if (exact.length === 0 || exact.some((m) => Math.abs(m.value! - arg.value) <= 0.005)) continue;
    return {
      step: action.step,
      action: action.what,
      attribute: { key: arg.key, value: Number(args[arg.key]) },
      fact: { value: exact[0]!.text, source: 'the task' },
      message: `step ${action.step} (${action.what}) uses ${arg.key}=${SHORT(args[arg.key])}, but the task asks for ${exact.map((m) => m.text).join(' or ')}`,
    };
  }
  return undefined;
}

function describe(party: Party, fact: TaskFact): string {
  const who = fact.role ?? party.role;
  return `the ${who} is ${SHORT(fact.value)} (${fact.source})`;
}
