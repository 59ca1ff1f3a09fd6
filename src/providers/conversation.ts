// The model calls of WebSocket conversations (the APIs of registry.ts CONVERSATION_PROVIDERS): one
// ConversationCalls per run, fed each turn of each conversation in order by whoever writes the turns
// as steps (the recorder and the replayer alike: src/record/websocket.ts), says which model calls
// each turn ends. A conversation is decoded by the first provider that detects one of its messages;
// a message that is not JSON (audio bytes, a ping) is skipped.

import { parseUntrusted } from '../recording/json.js';
import { isRecord } from './read.js';
import { CONVERSATION_PROVIDERS } from './registry.js';
import type { ConversationDecoder, ConversationModelCall } from './types.js';

/** One message of a turn as its writer has it: its bytes (a text message's as a string). */
export interface WireMessage {
  from: 'agent' | 'server';
  data: string | Uint8Array | undefined;
  atMs: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A message's JSON object, or undefined (not JSON, not an object, not UTF-8). */
function jsonOf(data: string | Uint8Array | undefined): Record<string, unknown> | undefined {
  if (data === undefined) return undefined;
  let text: string;
  try {
    text = typeof data === 'string' ? data : utf8.decode(data);
  } catch {
    return undefined;
  }
  if (!text.trimStart().startsWith('{')) return undefined;
  try {
    const json: unknown = parseUntrusted(text);
    return isRecord(json) ? json : undefined;
  } catch {
    return undefined;
  }
}

export class ConversationCalls {
  readonly #decoders = new Map<string, ConversationDecoder>();

  /** The model calls that the messages of one turn of connection `connectionId` at `url` end, in order. */
  turn(connectionId: string, url: string, messages: readonly WireMessage[]): ConversationModelCall[] {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return [];
    }
    const calls: ConversationModelCall[] = [];
    for (const message of messages) {
      const json = jsonOf(message.data);
      if (json === undefined) continue;
      let decoder = this.#decoders.get(connectionId);
      if (decoder === undefined) {
        decoder = CONVERSATION_PROVIDERS.find((p) => p.detect(parsed, json))?.decoder(parsed);
        if (decoder === undefined) continue;
        this.#decoders.set(connectionId, decoder);
      }
      calls.push(...decoder.message({ from: message.from, json, atMs: message.atMs }));
    }
    return calls;
  }

  /** The connection ended: its state goes. */
  close(connectionId: string): void {
    this.#decoders.delete(connectionId);
  }
}
