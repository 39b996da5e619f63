package io.leasehold;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManagerFactory;

/**
 * The client's TLS: an {@link SSLContext} from a PEM CA file (the roots the servers'
 * certificates are verified against; none: the JDK's) and a PEM client certificate and key
 * (mutual TLS), and which failures are TLS refusals. Keys may be PKCS#8 ("PRIVATE KEY"), SEC1
 * ("EC PRIVATE KEY", as {@code openssl ecparam -genkey} writes them) or PKCS#1 ("RSA PRIVATE
 * KEY"); the last two are wrapped into PKCS#8 here, a few bytes of DER, for the JDK's KeyFactory.
 * Stateless.
 */
final class Tls {
  /** The environment variables read when the builder gives no TLS option. */
  static final String ENV_CA_FILE = "LEASEHOLD_CA_FILE";
  static final String ENV_CERT = "LEASEHOLD_CERT";
  static final String ENV_KEY = "LEASEHOLD_KEY";

  private static final char[] NO_PASSWORD = new char[0];
  /** DER: OID 1.2.840.10045.2.1 (id-ecPublicKey). */
  private static final byte[] EC_PUBLIC_KEY = {0x06, 0x07, 0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x02, 0x01};
  /** DER: OID 1.2.840.113549.1.1.1 (rsaEncryption), then NULL parameters. */
  private static final byte[] RSA_ENCRYPTION = {0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d,
      0x01, 0x01, 0x01, 0x05, 0x00};

  private Tls() {}

  static LeaseholdException bad(String message) {
    return new LeaseholdException("bad_tls", message, 0);
  }

  /**
   * The context for {@code caFile} (null: the JDK's roots) and {@code certFile} with
   * {@code keyFile} (null: no client certificate). Throws {@code bad_tls} for a file it cannot
   * read or use.
   */
  static SSLContext context(Path caFile, Path certFile, Path keyFile) {
    try {
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(caFile == null ? null : trustStore(caFile));
      KeyManager[] keys = null;
      if (certFile != null) {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        List<Certificate> chain = certificates(certFile);
        ks.setKeyEntry("client", privateKey(keyFile), NO_PASSWORD, chain.toArray(new Certificate[0]));
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, NO_PASSWORD);
        keys = kmf.getKeyManagers();
      }
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(keys, tmf.getTrustManagers(), null);
      return ctx;
    } catch (GeneralSecurityException | IOException e) {
      throw bad("cannot use the TLS files: " + e);
    }
  }

  private static KeyStore trustStore(Path caFile) throws GeneralSecurityException, IOException {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    ks.load(null, null);
    int i = 0;
    for (Certificate c : certificates(caFile)) {
      ks.setCertificateEntry("ca-" + i++, c);
    }
    return ks;
  }

  private static List<Certificate> certificates(Path file) throws GeneralSecurityException {
    Collection<? extends Certificate> certs;
    try (InputStream in = Files.newInputStream(file)) {
      certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
    } catch (IOException e) {
      throw bad("cannot read " + file + ": " + e.getMessage());
    }
    if (certs.isEmpty()) {
      throw bad(file + " holds no PEM certificate");
    }
    return new ArrayList<>(certs);
  }

  /** The PEM private key of {@code file}: PKCS#8, SEC1 (EC) or PKCS#1 (RSA), unencrypted. */
  static PrivateKey privateKey(Path file) throws GeneralSecurityException {
    String pem;
    try {
      pem = Files.readString(file, StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw bad("cannot read " + file + ": " + e.getMessage());
    }
    for (String type : List.of("PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY")) {
      byte[] der = pemBlock(pem, type);
      if (der == null) {
        continue;
      }
      switch (type) {
        case "EC PRIVATE KEY":
          return KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(pkcs8FromSec1(der)));
        case "RSA PRIVATE KEY":
          return KeyFactory.getInstance("RSA").generatePrivate(
              new PKCS8EncodedKeySpec(pkcs8(RSA_ENCRYPTION, der)));
        default:
          return pkcs8Key(der);
      }
    }
    if (pem.contains("ENCRYPTED PRIVATE KEY")) {
      throw bad(file + " holds an encrypted key: decrypt it (openssl pkcs8 -topk8 -nocrypt)");
    }
    throw bad(file + " holds no PEM private key (PKCS#8, EC or RSA)");
  }

  private static PrivateKey pkcs8Key(byte[] der) throws GeneralSecurityException {
    GeneralSecurityException last = null;
    for (String algorithm : List.of("EC", "RSA", "EdDSA")) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException e) {
        last = e;
      }
    }
    throw last;
  }

  /** The base64 body of the first {@code -----BEGIN type-----} block, decoded; null when none. */
  private static byte[] pemBlock(String pem, String type) {
    String begin = "-----BEGIN " + type + "-----";
    int from = pem.indexOf(begin);
    if (from < 0) {
      return null;
    }
    int to = pem.indexOf("-----END " + type + "-----", from);
    if (to < 0) {
      return null;
    }
    return Base64.getMimeDecoder().decode(pem.substring(from + begin.length(), to));
  }

  /**
   * SEC1 ECPrivateKey {version, privateKey, [0] parameters, [1] publicKey} as PKCS#8
   * PrivateKeyInfo {0, {id-ecPublicKey, the curve of [0]}, OCTET STRING {the SEC1 key}}.
   */
  static byte[] pkcs8FromSec1(byte[] sec1) {
    Der outer = new Der(sec1, 0);
    if (outer.tag != 0x30) {
      throw bad("an EC PRIVATE KEY that is not a DER SEQUENCE");
    }
    for (Der field = new Der(sec1, outer.start); field.end <= outer.end; field = new Der(sec1, field.end)) {
      if (field.tag == 0xa0) { // [0] parameters: the named curve's OID
        Der curve = new Der(sec1, field.start);
        if (curve.tag != 0x06) {
          break;
        }
        byte[] algorithm = concat(EC_PUBLIC_KEY, Arrays.copyOfRange(sec1, curve.offset, curve.end));
        return pkcs8(algorithm, sec1);
      }
      if (field.end == outer.end) {
        break;
      }
    }
    throw bad("an EC PRIVATE KEY without its named curve");
  }

  /** PrivateKeyInfo {INTEGER 0, SEQUENCE {algorithm}, OCTET STRING {key}}. */
  private static byte[] pkcs8(byte[] algorithm, byte[] key) {
    return tlv(0x30, concat(new byte[] {0x02, 0x01, 0x00}, tlv(0x30, algorithm), tlv(0x04, key)));
  }

  private static byte[] tlv(int tag, byte[] content) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(content.length + 6);
    out.write(tag);
    int n = content.length;
    if (n < 0x80) {
      out.write(n);
    } else {
      int bytes = n > 0xffffff ? 4 : n > 0xffff ? 3 : n > 0xff ? 2 : 1;
      out.write(0x80 | bytes);
      for (int i = bytes - 1; i >= 0; i--) {
        out.write(n >>> (8 * i));
      }
    }
    out.writeBytes(content);
    return out.toByteArray();
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  /** One DER element at {@code offset}: its tag, where its content starts and where it ends. */
  private static final class Der {
    final int offset;
    final int tag;
    final int start;
    final int end;

    Der(byte[] b, int offset) {
      this.offset = offset;
      if (offset + 2 > b.length) {
        throw bad("a truncated DER key");
      }
      this.tag = b[offset] & 0xff;
      int len = b[offset + 1] & 0xff;
      int at = offset + 2;
      if (len >= 0x80) {
        int bytes = len & 0x7f;
        if (bytes == 0 || bytes > 3 || at + bytes > b.length) {
          throw bad("a DER key with a bad length");
        }
        len = 0;
        for (int i = 0; i < bytes; i++) {
          len = (len << 8) | (b[at++] & 0xff);
        }
      }
      this.start = at;
      this.end = at + len;
      if (end > b.length) {
        throw bad("a truncated DER key");
      }
    }
  }

  /**
   * The TLS failure in {@code e} or its causes when the handshake failed for good, else null: the
   * server's certificate did not verify (unknown authority, expired, wrong host: a
   * CertificateException underneath), the server refused ours (a fatal alert it sent), or it does
   * not speak TLS. Asking again would fail the same way, and the server acted on nothing. A
   * handshake the server merely broke off ("Remote host terminated the handshake": a restart,
   * say) is not one: that is a connection that failed.
   */
  static SSLException refusal(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SSLException) {
        String m = String.valueOf(t.getMessage());
        if (m.startsWith("Received fatal alert") || m.startsWith("Unrecognized SSL message")
            || m.startsWith("Unsupported or unrecognized SSL message") || certificateRefused(t)) {
          return (SSLException) t;
        }
      }
    }
    return null;
  }

  private static boolean certificateRefused(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof CertificateException) {
        return true;
      }
    }
    return false;
  }

  /** The error of a refused handshake with {@code node}: code {@code tls}, the TLS failure as its cause. */
  static UnreachableException error(String node, SSLException e) {
    String why = String.valueOf(e.getMessage());
    if (why.startsWith("Received fatal alert")) {
      why = "the server refused the handshake: " + why;
    }
    UnreachableException u = new UnreachableException("tls", node + ": " + why, 0);
    u.initCause(e);
    return u;
  }
}
