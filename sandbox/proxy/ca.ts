// The per-run certificate authority of the sandbox proxy: a CA made for one run (its key lives
// only in this process, its certificate in the run's temp folder) and a certificate per host
// signed by it on first use, so TLS clients in the sandbox that trust the CA (SSL_CERT_FILE,
// NODE_EXTRA_CA_CERTS, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE) talk to the proxy as to the host.
// ECDSA P-256 keys made and used by node:crypto (native and instant; RSA keys take ~0.5 s each
// here); asn1js encodes the X.509 structures (RFC 5280), which are few and fixed: a certificate
// is its to-be-signed part, the signature's algorithm and the signature. (pkijs did this until
// 2026-11-30: ~20 ms of loading at every sandboxed replay's start for the same bytes.)
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';
import tls from 'node:tls';
import * as asn1js from 'asn1js';

export interface RunCa {
  /** The CA certificate (PEM): what the sandbox's clients are told to trust. */
  readonly certPem: string;
  /** A TLS context presenting a certificate for `host` (a DNS name or an IP address), made once. */
  contextFor(host: string): Promise<tls.SecureContext>;
}

const DAY = 86_400_000;
const OID = {
  commonName: '2.5.4.3',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
  serverAuth: '1.3.6.1.5.5.7.3.1',
};

const pem = (label: string, der: ArrayBuffer | Buffer): string =>
  `-----BEGIN ${label}-----\n${(
    Buffer.from(der as ArrayBuffer)
      .toString('base64')
      .match(/.{1,64}/g) ?? []
  ).join('\n')}\n-----END ${label}-----\n`;

/** A Name holding one common name: SEQUENCE { SET { SEQUENCE { commonName, UTF8String } } }. */
function name(cn: string): asn1js.Sequence {
  return new asn1js.Sequence({
    value: [
      new asn1js.Set({
        value: [
          new asn1js.Sequence({
            value: [new asn1js.ObjectIdentifier({ value: OID.commonName }), new asn1js.Utf8String({ value: cn })],
          }),
        ],
      }),
    ],
  });
}

/** An Extension: SEQUENCE { extnID, critical (left out when false: DER omits a default), extnValue }. */
function extension(extnID: string, critical: boolean, value: asn1js.BaseBlock): asn1js.Sequence {
  return new asn1js.Sequence({
    value: [
      new asn1js.ObjectIdentifier({ value: extnID }),
      ...(critical ? [new asn1js.Boolean({ value: true })] : []),
      new asn1js.OctetString({ valueHex: value.toBER(false) }),
    ],
  });
}

/** BasicConstraints: SEQUENCE { cA BOOLEAN DEFAULT FALSE, pathLenConstraint INTEGER OPTIONAL }. */
function basicConstraints(ca: boolean): asn1js.Sequence {
  return new asn1js.Sequence({
    value: ca ? [new asn1js.Boolean({ value: true }), new asn1js.Integer({ value: 0 })] : [],
  });
}

/** KeyUsage bits (RFC 5280 §4.2.1.3): digitalSignature = bit 0, keyCertSign = bit 5, cRLSign = bit 6. */
function keyUsage(bits: number[]): asn1js.BitString {
  const byte = bits.reduce((acc, bit) => acc | (0x80 >> bit), 0);
  const unused = Math.min(7, 7 - Math.max(...bits));
  return new asn1js.BitString({ valueHex: new Uint8Array([byte]).buffer, unusedBits: unused });
}

/** A GeneralName (implicitly tagged): dNSName [2] IA5String, or iPAddress [7] OCTET STRING. */
function generalName(host: string): asn1js.Primitive {
  return isIP(host)
    ? new asn1js.Primitive({ idBlock: { tagClass: 3, tagNumber: 7 }, valueHex: ipBytes(host) })
    : new asn1js.Primitive({ idBlock: { tagClass: 3, tagNumber: 2 }, valueHex: Buffer.from(host, 'latin1') });
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

/** A public key's SubjectPublicKeyInfo (DER, parsed) and its key identifier: SHA-1 of the key's bits (RFC 5280 §4.2.1.2, method 1). */
function keyInfo(publicKey: KeyObject): { spki: asn1js.AsnType; id: Buffer } {
  const parsed = asn1js.fromBER(publicKey.export({ type: 'spki', format: 'der' }));
  const bits = parsed.result instanceof asn1js.Sequence ? parsed.result.valueBlock.value[1] : undefined;
  if (parsed.offset === -1 || !(bits instanceof asn1js.BitString))
    throw new Error('the public key did not export as a SubjectPublicKeyInfo');
  return { spki: parsed.result, id: createHash('sha1').update(bits.valueBlock.valueHexView).digest() };
}

/**
 * The key identifiers (RFC 5280 §4.2.1.1-2): the subject's, and the issuer's for a certificate it
 * signs. Strict verifiers require them (OpenSSL's X509_STRICT, Python 3.13's default context, as
 * httpx and the OpenAI and Anthropic Python SDKs use it): a CA without its own, or a host
 * certificate without its issuer's, fails there with "Missing Subject/Authority Key Identifier".
 */
function keyIdentifiers(subject: Buffer, issuer: Buffer | undefined): asn1js.Sequence[] {
  return [
    extension(OID.subjectKeyIdentifier, false, new asn1js.OctetString({ valueHex: subject })),
    ...(issuer
      ? [
          extension(
            OID.authorityKeyIdentifier,
            false,
            // AuthorityKeyIdentifier: SEQUENCE { keyIdentifier [0] IMPLICIT OCTET STRING }
            new asn1js.Sequence({
              value: [new asn1js.Primitive({ idBlock: { tagClass: 3, tagNumber: 0 }, valueHex: issuer })],
            }),
          ),
        ]
      : []),
  ];
}

/** The signature's AlgorithmIdentifier: ecdsa-with-SHA256, with no parameters (RFC 5758 §3.2). */
const ecdsaWithSha256 = () =>
  new asn1js.Sequence({ value: [new asn1js.ObjectIdentifier({ value: OID.ecdsaWithSha256 })] });

/** A v3 certificate for `publicKey`, signed with `signingKey` (ECDSA, SHA-256), as PEM. */
function certificate(options: {
  subject: string;
  issuer: string;
  publicKey: { spki: asn1js.AsnType };
  signingKey: KeyObject;
  extensions: asn1js.Sequence[];
  notBefore: Date;
  notAfter: Date;
}): string {
  const serial = randomBytes(16);
  // DER: a positive INTEGER with no leading zero byte (0x00 first made 1 in 128 CAs unreadable: "illegal padding").
  serial[0] = ((serial[0] as number) & 0x7f) | 0x40;
  const tbs = new asn1js.Sequence({
    value: [
      // version [0] EXPLICIT: v3 (2)
      new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 0 }, value: [new asn1js.Integer({ value: 2 })] }),
      new asn1js.Integer({ valueHex: serial }),
      ecdsaWithSha256(),
      name(options.issuer),
      // UTCTime: the validity is within days of now (RFC 5280 §4.1.2.5: UTCTime up to 2049).
      new asn1js.Sequence({
        value: [
          new asn1js.UTCTime({ valueDate: options.notBefore }),
          new asn1js.UTCTime({ valueDate: options.notAfter }),
        ],
      }),
      name(options.subject),
      options.publicKey.spki,
      // extensions [3] EXPLICIT
      new asn1js.Constructed({
        idBlock: { tagClass: 3, tagNumber: 3 },
        value: [new asn1js.Sequence({ value: options.extensions })],
      }),
    ],
  });
  const tbsDer = Buffer.from(tbs.toBER(false));
  const signature = sign('sha256', tbsDer, { key: options.signingKey, dsaEncoding: 'der' });
  const cert = new asn1js.Sequence({
    value: [tbs, ecdsaWithSha256(), new asn1js.BitString({ valueHex: signature, unusedBits: 0 })],
  });
  return pem('CERTIFICATE', cert.toBER(false));
}

/**
 * Makes a CA for one run. Its validity starts a day back (clocks inside a replay may be the
 * recorded ones) and lasts a week.
 * @example const ca = await createRunCa(); tls.createServer({ SNICallback: (h, cb) => ca.contextFor(h).then((c) => cb(null, c)) })
 */
export async function createRunCa(label = 'tapedeck sandbox CA'): Promise<RunCa> {
  const now = Date.now();
  const notBefore = new Date(now - DAY);
  const notAfter = new Date(now + 7 * DAY);
  const caKeys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const caKey = keyInfo(caKeys.publicKey);
  const caName = `${label} ${randomBytes(4).toString('hex')}`;
  const certPem = certificate({
    subject: caName,
    issuer: caName,
    publicKey: caKey,
    signingKey: caKeys.privateKey,
    notBefore,
    notAfter,
    extensions: [
      extension(OID.basicConstraints, true, basicConstraints(true)),
      extension(OID.keyUsage, true, keyUsage([5, 6])),
      ...keyIdentifiers(caKey.id, undefined),
    ],
  });
  // One key for every host certificate of the run: signing is the per-host cost, not key making.
  const leafKeys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const leafKey = keyInfo(leafKeys.publicKey);
  const leafKeyPem = leafKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const contexts = new Map<string, Promise<tls.SecureContext>>();

  const make = async (host: string): Promise<tls.SecureContext> => {
    const leafPem = certificate({
      subject: host.slice(0, 64),
      issuer: caName,
      publicKey: leafKey,
      signingKey: caKeys.privateKey,
      notBefore,
      notAfter,
      extensions: [
        extension(OID.basicConstraints, false, basicConstraints(false)),
        extension(OID.keyUsage, true, keyUsage([0])),
        extension(
          OID.extKeyUsage,
          false,
          new asn1js.Sequence({ value: [new asn1js.ObjectIdentifier({ value: OID.serverAuth })] }),
        ),
        extension(OID.subjectAltName, false, new asn1js.Sequence({ value: [generalName(host)] })),
        ...keyIdentifiers(leafKey.id, caKey.id),
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
