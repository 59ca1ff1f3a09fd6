// Every run CA is one OpenSSL reads: Node loads it through NODE_EXTRA_CA_CERTS and says "Ignoring
// extra certs … illegal padding" on the agent's stderr when its DER is not minimal (a serial
// number starting with a zero byte did that to 1 CA in 128).
import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { createRunCa } from './ca.js';

describe('run CA', () => {
  it('is readable by OpenSSL every time (600 CAs)', async () => {
    for (let i = 0; i < 600; i++) {
      const ca = await createRunCa();
      const serial = new X509Certificate(ca.certPem).serialNumber;
      expect(serial.length, serial).toBe(32);
      expect(Number.parseInt(serial.slice(0, 2), 16)).toBeGreaterThanOrEqual(0x40);
      expect(() => createSecureContext({ ca: ca.certPem })).not.toThrow();
    }
  }, 170_000);
});
