// TLS for https:// nodes (README, "TLS"): the certificates a client trusts
// and presents, read once from its options or the environment, and which
// failures are TLS refusals. The server's certificate and host name are
// always verified: there is no option to skip that.
import { readFileSync } from "node:fs";
import { createSecureContext, type SecureContext } from "node:tls";
import { LeaseholdError } from "./errors.js";

/** The TLS options of a Client. A PEM given as text wins over its file; a file over the environment. */
export interface TlsOptions {
  /** The CA certificates (PEM file) that verify the servers, instead of Node's default store. Env LEASEHOLD_CA_FILE. */
  caFile?: string;
  /** The client certificate (PEM file, may hold the chain), presented when a server asks. Env LEASEHOLD_CERT. */
  certFile?: string;
  /** Its private key (PEM file); default: the key in `certFile`. Env LEASEHOLD_KEY. */
  keyFile?: string;
  /** As `caFile`, the PEM text itself. */
  ca?: string;
  /** As `certFile`, the PEM text itself. */
  cert?: string;
  /** As `keyFile`, the PEM text itself. */
  key?: string;
}

export const kEnvCaFile = "LEASEHOLD_CA_FILE";
export const kEnvCert = "LEASEHOLD_CERT";
export const kEnvKey = "LEASEHOLD_KEY";

function badTls(message: string, cause?: unknown): LeaseholdError {
  return new LeaseholdError(message, { code: "bad_tls", cause });
}

/** The PEM text given, else the file given, else the file the environment names; undefined when none. */
function pem(text: string | undefined, file: string | undefined, env: string, what: string): string | undefined {
  if (text !== undefined && file !== undefined) throw badTls(`give ${what} as text or as a file, not both`);
  if (text !== undefined) return text;
  const path = file ?? (process.env[env] || undefined);
  if (path === undefined) return undefined;
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw badTls(`cannot read the ${what} file ${path}: ${(error as Error).message}`, error);
  }
}

/**
 * The secure context of a client's https:// connections, from its options'
 * certificates, else the environment's: made and checked now when some are
 * given, else (Node's default CA store) when first asked for. Throws
 * LeaseholdError `bad_tls` for a file that cannot be read, a key without a
 * certificate, or PEMs OpenSSL refuses (a key that does not match its
 * certificate).
 */
export function secureContextOf(options: TlsOptions): () => SecureContext {
  const ca = pem(options.ca, options.caFile, kEnvCaFile, "CA");
  const cert = pem(options.cert, options.certFile, kEnvCert, "certificate");
  const key = pem(options.key, options.keyFile, kEnvKey, "key") ?? cert;
  if (cert === undefined && key !== undefined) throw badTls(`a key without its certificate: ${kEnvCert} or certFile`);
  if (ca === undefined && cert === undefined) {
    let context: SecureContext | undefined;
    return () => (context ??= createSecureContext());
  }
  try {
    const context = createSecureContext({ ca, cert, key });
    return () => context;
  } catch (error) {
    throw badTls(`cannot use the TLS certificates: ${(error as Error).message}`, error);
  }
}

// Node's codes of a certificate it did not accept (OpenSSL's X509_V_ERR names).
const kVerifyCodes = new Set([
  "CERT_CHAIN_TOO_LONG",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_REJECTED",
  "CERT_REVOKED",
  "CERT_SIGNATURE_FAILURE",
  "CERT_UNTRUSTED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "HOSTNAME_MISMATCH",
  "INVALID_CA",
  "INVALID_PURPOSE",
  "PATH_LENGTH_EXCEEDED",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
]);

/**
 * What the TLS refusal behind `error` says, or undefined: a server
 * certificate not accepted (unknown CA, expired, another host), or an alert
 * of the server's (`ERR_SSL_…`: it refused our certificate, or none). The
 * server acts on nothing sent over a connection whose handshake failed,
 * even when (TLS 1.3) its alert arrives after the request was written.
 */
export function tlsRefusal(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  let e: unknown = error;
  while (e !== null && typeof e === "object" && !seen.has(e)) {
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && (kVerifyCodes.has(code) || code.startsWith("ERR_SSL_"))) {
      // OpenSSL's errors carry the short reason ("tlsv13 alert certificate required") apart.
      const { reason, message } = e as { reason?: unknown; message?: unknown };
      return `${code}: ${typeof reason === "string" ? reason : message}`;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
