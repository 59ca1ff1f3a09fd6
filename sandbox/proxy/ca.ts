// The per-run certificate authority of the sandbox proxy: a CA made for one run (its key lives
// only in this process, its certificate in the run's temp folder) and a certificate per host
// signed by it on first use, so TLS clients in the sandbox that trust the CA (SSL_CERT_FILE,
// NODE_EXTRA_CA_CERTS, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE) talk to the proxy as to the host.
// ECDSA P-256 keys from WebCrypto (native and instant; RSA keys take ~0.5 s each here); pkijs
// builds and signs the X.509 structures.
import { randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import tls from 'node:tls';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

export interface RunCa {
  /** The CA certificate (PEM): what the sandbox's clients are told to trust. */
  readonly certPem: string;
  /** A TLS context presenting a certificate for `host` (a DNS name or an IP address), made once. */
  contextFor(host: string): Promise<tls.SecureContext>;
}

const DAY = 86_400_000;
const ALG = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const OID = {
  commonName: '2.5.4.3',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  serverAuth: '1.3.6.1.5.5.7.3.1',
};

const engine = new pkijs.CryptoEngine({ name: 'node', crypto: webcrypto as unknown as Crypto });

const pem = (label: string, der: ArrayBuffer): string =>
  `-----BEGIN ${label}-----\n${(
    Buffer.from(der)
      .toString('base64')
      .match(/.{1,64}/g) ?? []
  ).join('\n')}\n-----END ${label}-----\n`;

function name(cn: string): pkijs.RelativeDistinguishedNames {
  const rdn = new pkijs.RelativeDistinguishedNames();
  rdn.typesAndValues.push(
    new pkijs.AttributeTypeAndValue({ type: OID.commonName, value: new asn1js.Utf8String({ value: cn }) }),
  );
  return rdn;
}

function extension(extnID: string, critical: boolean, value: asn1js.BaseBlock): pkijs.Extension {
  return new pkijs.Extension({
    extnID,
    critical,
    extnValue: value.toBER(false),
  });
}

/** KeyUsage bits (RFC 5280 §4.2.1.3): digitalSignature = bit 0, keyCertSign = bit 5, cRLSign = bit 6. */
function keyUsage(bits: number[]): asn1js.BitString {
  const byte = bits.reduce((acc, bit) => acc | (0x80 >> bit), 0);
  const unused = Math.min(7, 7 - Math.max(...bits));
  return new asn1js.BitString({ valueHex: new Uint8Array([byte]).buffer, unusedBits: unused });
}

function ipBytes(ip: string): Uint8Array {
  if (isIP(ip) === 4) return new Uint8Array(ip.split('.').map(Number));
  // IPv6: expand :: and write 8 groups of 16 bits.
  const [head = '', tail = ''] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = ip.includes('::') ? (tail ? tail.split(':') : []) : [];
  const groups = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    const v = Number.parseInt(g, 16);
    out[i * 2] = v >> 8;
    out[i * 2 + 1] = v & 0xff;
  });
  return out;
}

async function certificate(options: {
  subject: pkijs.RelativeDistinguishedNames;
  issuer: pkijs.RelativeDistinguishedNames;
  publicKey: CryptoKey;
  signingKey: CryptoKey;
  extensions: pkijs.Extension[];
  notBefore: Date;
  notAfter: Date;
}): Promise<string> {
  const cert = new pkijs.Certificate();
  cert.version = 2;
  const serial = randomBytes(16);
  // DER: a positive INTEGER with no leading zero byte (0x00 first made 1 in 128 CAs unreadable: "illegal padding").
  serial[0] = ((serial[0] as number) & 0x7f) | 0x40;
  cert.serialNumber = new asn1js.Integer({ valueHex: serial });
  cert.subject = options.subject;
  cert.issuer = options.issuer;
  cert.notBefore.value = options.notBefore;
  cert.notAfter.value = options.notAfter;
  cert.extensions = options.extensions;
  await cert.subjectPublicKeyInfo.importKey(options.publicKey, engine);
  await cert.sign(options.signingKey, 'SHA-256', engine);
  return pem('CERTIFICATE', cert.toSchema(true).toBER(false));
}

/**
 * Makes a CA for one run. Its validity starts a day back (clocks inside a replay may be the
 * recorded ones) and lasts a week.
 * @example const ca = await createRunCa(); tls.createServer({ SNICallback: (h, cb) => ca.contextFor(h).then((c) => cb(null, c)) })
 */
export async function createRunCa(label = 'tapedeck sandbox CA'): Promise<RunCa> {
  const subtle = webcrypto.subtle;
  const now = Date.now();
  const notBefore = new Date(now - DAY);
  const notAfter = new Date(now + 7 * DAY);
  const caKeys = (await subtle.generateKey(ALG, false, ['sign', 'verify'])) as CryptoKeyPair;
  const caName = name(`${label} ${randomBytes(4).toString('hex')}`);
  const certPem = await certificate({
    subject: caName,
    issuer: caName,
    publicKey: caKeys.publicKey,
    signingKey: caKeys.privateKey,
    notBefore,
    notAfter,
    extensions: [
      extension(OID.basicConstraints, true, new pkijs.BasicConstraints({ cA: true, pathLenConstraint: 0 }).toSchema()),
      extension(OID.keyUsage, true, keyUsage([5, 6])),
    ],
  });
  // One key for every host certificate of the run: signing is the per-host cost, not key making.
  const leafKeys = (await subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const leafKeyPem = pem('PRIVATE KEY', await subtle.exportKey('pkcs8', leafKeys.privateKey));
  const contexts = new Map<string, Promise<tls.SecureContext>>();

  const make = async (host: string): Promise<tls.SecureContext> => {
    const altName = isIP(host)
      ? new pkijs.GeneralName({ type: 7, value: new asn1js.OctetString({ valueHex: ipBytes(host) }) })
      : new pkijs.GeneralName({ type: 2, value: host });
    const leafPem = await certificate({
      subject: name(host.slice(0, 64)),
      issuer: caName,
      publicKey: leafKeys.publicKey,
      signingKey: caKeys.privateKey,
      notBefore,
      notAfter,
      extensions: [
        extension(OID.basicConstraints, false, new pkijs.BasicConstraints({ cA: false }).toSchema()),
        extension(OID.keyUsage, true, keyUsage([0])),
        extension(OID.extKeyUsage, false, new pkijs.ExtKeyUsage({ keyPurposes: [OID.serverAuth] }).toSchema()),
        extension(OID.subjectAltName, false, new pkijs.GeneralNames({ names: [altName] }).toSchema()),
      ],
    });
    return tls.createSecureContext({ key: leafKeyPem, cert: `${leafPem}${certPem}` });
  };

  return {
    certPem,
    contextFor(rawHost: string) {
      const host = rawHost.replace(/^\[|\]$/g, '').toLowerCase();
      let context = contexts.get(host);
      if (!context) {
        context = make(host);
        contexts.set(host, context);
      }
      return context;
    },
  };
}
