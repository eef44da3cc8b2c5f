//! Web Push message encryption (RFC 8291): the `aes128gcm` content coding of RFC 8188 with one record,
//! keyed by an ECDH agreement between a fresh application-server key pair and the browser's `p256dh`
//! key, mixed with the subscription's 16-byte `auth` secret.
//!
//! Built from maintained RustCrypto primitives (`p256` ECDH, `hkdf` + `sha2`, `aes-gcm`); only the
//! key schedule and the record framing are composed here. [`encrypt_with`] takes the salt and the
//! ephemeral key so the RFC's example vector can be checked; [`decrypt`] is the browser's side (used
//! by tests and the test push services).

use aes_gcm::aead::{Aead as _, KeyInit as _};
use aes_gcm::{Aes128Gcm, Nonce};
use hkdf::Hkdf;
use p256::elliptic_curve::sec1::ToEncodedPoint as _;
use p256::{FieldBytes, PublicKey, SecretKey};
use sha2::Sha256;

/// Record size written in the header. One record holds the whole message.
pub const RECORD_SIZE: u32 = 4096;
pub const AUTH_SECRET_LEN: usize = 16;
pub const SALT_LEN: usize = 16;
/// Length of an uncompressed SEC1 P-256 point (`0x04 || X || Y`).
pub const PUBLIC_KEY_LEN: usize = 65;
const TAG_LEN: usize = 16;
/// salt (16) + rs (4) + idlen (1) + keyid (the 65-byte application-server public key).
pub const HEADER_LEN: usize = SALT_LEN + 4 + 1 + PUBLIC_KEY_LEN;
/// The largest plaintext that fits one record (delimiter and tag included).
pub const MAX_PLAINTEXT: usize = RECORD_SIZE as usize - TAG_LEN - 1;

/// Why a key could not be used or a body could not be encrypted or decrypted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CryptoError {
    #[error(
        "not an uncompressed P-256 public key: expected 65 bytes starting with 0x04 that form a point on the curve"
    )]
    BadPublicKey,
    #[error("the auth secret must be {AUTH_SECRET_LEN} bytes, got {0}")]
    BadAuthSecret(usize),
    #[error("the plaintext is {0} bytes; one record holds at most {MAX_PLAINTEXT}")]
    TooLarge(usize),
    #[error("not an aes128gcm Web Push body: {0}")]
    Malformed(&'static str),
    #[error("decryption failed: wrong key or auth secret, or a corrupted body")]
    Decrypt,
}

/// Parses the browser's `p256dh` key: an uncompressed point on P-256.
pub fn parse_public_key(bytes: &[u8]) -> Result<PublicKey, CryptoError> {
    if bytes.len() != PUBLIC_KEY_LEN || bytes[0] != 0x04 {
        return Err(CryptoError::BadPublicKey);
    }
    PublicKey::from_sec1_bytes(bytes).map_err(|_| CryptoError::BadPublicKey)
}

/// The uncompressed SEC1 encoding of `key` (65 bytes).
pub fn public_key_bytes(key: &PublicKey) -> [u8; PUBLIC_KEY_LEN] {
    let point = key.to_encoded_point(false);
    let mut out = [0u8; PUBLIC_KEY_LEN];
    out.copy_from_slice(point.as_bytes());
    out
}

/// A fresh random P-256 secret key (rejection sampling over the OS random generator).
pub fn random_secret_key() -> SecretKey {
    loop {
        let bytes: [u8; 32] = rand::random();
        if let Ok(key) = SecretKey::from_bytes(&FieldBytes::from(bytes)) {
            return key;
        }
    }
}

fn auth_secret(auth: &[u8]) -> Result<&[u8; AUTH_SECRET_LEN], CryptoError> {
    auth.try_into()
        .map_err(|_| CryptoError::BadAuthSecret(auth.len()))
}

/// RFC 8291 §3.3–3.4: the content-encryption key and nonce of a message.
fn derive(
    shared: &[u8],
    auth: &[u8; AUTH_SECRET_LEN],
    ua_public: &[u8; PUBLIC_KEY_LEN],
    as_public: &[u8; PUBLIC_KEY_LEN],
    salt: &[u8; SALT_LEN],
) -> ([u8; 16], [u8; 12]) {
    let mut key_info = Vec::with_capacity(14 + 2 * PUBLIC_KEY_LEN);
    key_info.extend_from_slice(b"WebPush: info\0");
    key_info.extend_from_slice(ua_public);
    key_info.extend_from_slice(as_public);
    let mut ikm = [0u8; 32];
    Hkdf::<Sha256>::new(Some(auth), shared)
        .expand(&key_info, &mut ikm)
        .expect("32 bytes is a valid HKDF-SHA-256 output length");
    let prk = Hkdf::<Sha256>::new(Some(salt), &ikm);
    let mut cek = [0u8; 16];
    let mut nonce = [0u8; 12];
    prk.expand(b"Content-Encoding: aes128gcm\0", &mut cek)
        .expect("16 bytes is a valid HKDF-SHA-256 output length");
    prk.expand(b"Content-Encoding: nonce\0", &mut nonce)
        .expect("12 bytes is a valid HKDF-SHA-256 output length");
    (cek, nonce)
}

fn agree(secret: &SecretKey, public: &PublicKey) -> FieldBytes {
    *p256::ecdh::diffie_hellman(secret.to_nonzero_scalar(), public.as_affine()).raw_secret_bytes()
}

/// Encrypts `plaintext` for a subscription with a fresh salt and ephemeral key pair.
pub fn encrypt(
    plaintext: &[u8],
    ua_public: &PublicKey,
    auth: &[u8],
) -> Result<Vec<u8>, CryptoError> {
    let salt: [u8; SALT_LEN] = rand::random();
    encrypt_with(plaintext, ua_public, auth, &random_secret_key(), &salt)
}

/// [`encrypt`] with the application server's ephemeral key and the salt given (tests use the RFC's).
/// Output: the RFC 8188 header (salt, rs, keyid = the ephemeral public key) and one record, the
/// plaintext followed by the last-record delimiter `0x02`, sealed with AES-128-GCM.
pub fn encrypt_with(
    plaintext: &[u8],
    ua_public: &PublicKey,
    auth: &[u8],
    as_secret: &SecretKey,
    salt: &[u8; SALT_LEN],
) -> Result<Vec<u8>, CryptoError> {
    let auth = auth_secret(auth)?;
    if plaintext.len() > MAX_PLAINTEXT {
        return Err(CryptoError::TooLarge(plaintext.len()));
    }
    let ua_bytes = public_key_bytes(ua_public);
    let as_bytes = public_key_bytes(&as_secret.public_key());
    let shared = agree(as_secret, ua_public);
    let (cek, nonce) = derive(&shared, auth, &ua_bytes, &as_bytes, salt);
    let mut record = Vec::with_capacity(plaintext.len() + 1);
    record.extend_from_slice(plaintext);
    record.push(0x02);
    let sealed = Aes128Gcm::new_from_slice(&cek)
        .expect("a 16-byte AES-128 key")
        .encrypt(Nonce::from_slice(&nonce), record.as_slice())
        .map_err(|_| CryptoError::Decrypt)?;
    let mut out = Vec::with_capacity(HEADER_LEN + sealed.len());
    out.extend_from_slice(salt);
    out.extend_from_slice(&RECORD_SIZE.to_be_bytes());
    out.push(PUBLIC_KEY_LEN as u8);
    out.extend_from_slice(&as_bytes);
    out.extend_from_slice(&sealed);
    Ok(out)
}

/// The browser's side: opens a one-record `aes128gcm` body with the subscription's private key.
pub fn decrypt(body: &[u8], ua_secret: &SecretKey, auth: &[u8]) -> Result<Vec<u8>, CryptoError> {
    let auth = auth_secret(auth)?;
    if body.len() < SALT_LEN + 5 {
        return Err(CryptoError::Malformed("shorter than its header"));
    }
    let salt: &[u8; SALT_LEN] = body[..SALT_LEN].try_into().expect("16 bytes");
    let rs = u32::from_be_bytes(body[SALT_LEN..SALT_LEN + 4].try_into().expect("4 bytes"));
    let idlen = usize::from(body[SALT_LEN + 4]);
    if idlen != PUBLIC_KEY_LEN || body.len() < HEADER_LEN {
        return Err(CryptoError::Malformed(
            "the key id is not a 65-byte P-256 public key",
        ));
    }
    let as_bytes: &[u8; PUBLIC_KEY_LEN] =
        body[SALT_LEN + 5..HEADER_LEN].try_into().expect("65 bytes");
    let as_public = parse_public_key(as_bytes)?;
    let sealed = &body[HEADER_LEN..];
    if sealed.len() <= TAG_LEN || sealed.len() > rs as usize {
        return Err(CryptoError::Malformed(
            "the body is not exactly one record of at most rs bytes",
        ));
    }
    let ua_bytes = public_key_bytes(&ua_secret.public_key());
    let shared = agree(ua_secret, &as_public);
    let (cek, nonce) = derive(&shared, auth, &ua_bytes, as_bytes, salt);
    let mut record = Aes128Gcm::new_from_slice(&cek)
        .expect("a 16-byte AES-128 key")
        .decrypt(Nonce::from_slice(&nonce), sealed)
        .map_err(|_| CryptoError::Decrypt)?;
    while record.last() == Some(&0) {
        record.pop();
    }
    if record.pop() != Some(0x02) {
        return Err(CryptoError::Malformed(
            "the record does not end with the last-record delimiter 0x02",
        ));
    }
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    fn b64(s: &str) -> Vec<u8> {
        URL_SAFE_NO_PAD.decode(s).unwrap()
    }

    fn secret(s: &str) -> SecretKey {
        SecretKey::from_slice(&b64(s)).unwrap()
    }

    // RFC 8291 section 5 (and appendix A): every input and the exact output.
    const PLAINTEXT: &str = "When I grow up, I want to be a watermelon";
    const AS_PRIVATE: &str = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw";
    const AS_PUBLIC: &str =
        "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8";
    const UA_PRIVATE: &str = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94";
    const UA_PUBLIC: &str =
        "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
    const SALT: &str = "DGv6ra1nlYgDCS1FRnbzlw";
    const AUTH: &str = "BTBZMqHH6r4Tts7J_aSIgg";
    const SHARED: &str = "kyrL1jIIOHEzg3sM2ZWRHDRB62YACZhhSlknJ672kSs";
    const CEK: &str = "oIhVW04MRdy2XN9CiKLxTg";
    const NONCE: &str = "4h_95klXJ5E_qnoN";
    const BODY: &str = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN";

    #[test]
    fn rfc8291_example_keys_and_schedule() {
        let as_secret = secret(AS_PRIVATE);
        let ua_secret = secret(UA_PRIVATE);
        assert_eq!(
            public_key_bytes(&as_secret.public_key()).to_vec(),
            b64(AS_PUBLIC)
        );
        assert_eq!(
            public_key_bytes(&ua_secret.public_key()).to_vec(),
            b64(UA_PUBLIC)
        );
        let ua_public = parse_public_key(&b64(UA_PUBLIC)).unwrap();
        let shared = agree(&as_secret, &ua_public);
        assert_eq!(shared.to_vec(), b64(SHARED));
        let (cek, nonce) = derive(
            &shared,
            b64(AUTH).as_slice().try_into().unwrap(),
            b64(UA_PUBLIC).as_slice().try_into().unwrap(),
            b64(AS_PUBLIC).as_slice().try_into().unwrap(),
            b64(SALT).as_slice().try_into().unwrap(),
        );
        assert_eq!(cek.to_vec(), b64(CEK));
        assert_eq!(nonce.to_vec(), b64(NONCE));
    }

    #[test]
    fn rfc8291_example_encrypts_to_the_exact_body() {
        let ua_public = parse_public_key(&b64(UA_PUBLIC)).unwrap();
        let salt: [u8; SALT_LEN] = b64(SALT).try_into().unwrap();
        let body = encrypt_with(
            PLAINTEXT.as_bytes(),
            &ua_public,
            &b64(AUTH),
            &secret(AS_PRIVATE),
            &salt,
        )
        .unwrap();
        assert_eq!(URL_SAFE_NO_PAD.encode(&body), BODY);
    }

    #[test]
    fn rfc8291_example_decrypts() {
        let plain = decrypt(&b64(BODY), &secret(UA_PRIVATE), &b64(AUTH)).unwrap();
        assert_eq!(plain, PLAINTEXT.as_bytes());
        // The wrong auth secret or key fails closed.
        let mut bad_auth = b64(AUTH);
        bad_auth[0] ^= 1;
        assert_eq!(
            decrypt(&b64(BODY), &secret(UA_PRIVATE), &bad_auth),
            Err(CryptoError::Decrypt)
        );
        assert_eq!(
            decrypt(&b64(BODY), &random_secret_key(), &b64(AUTH)),
            Err(CryptoError::Decrypt)
        );
    }

    #[test]
    fn random_round_trip_uses_fresh_salt_and_key() {
        let ua = random_secret_key();
        let auth: [u8; 16] = rand::random();
        let msg = "{\"v\":1,\"title\":\"héllo\"}".as_bytes();
        let a = encrypt(msg, &ua.public_key(), &auth).unwrap();
        let b = encrypt(msg, &ua.public_key(), &auth).unwrap();
        assert_ne!(a[..HEADER_LEN], b[..HEADER_LEN], "salt and key differ");
        assert_eq!(a.len(), HEADER_LEN + msg.len() + 1 + TAG_LEN);
        assert_eq!(decrypt(&a, &ua, &auth).unwrap(), msg);
        assert_eq!(decrypt(&b, &ua, &auth).unwrap(), msg);
    }

    #[test]
    fn bad_inputs_are_refused() {
        let ua = random_secret_key();
        assert_eq!(
            encrypt(b"x", &ua.public_key(), &[0; 15]),
            Err(CryptoError::BadAuthSecret(15))
        );
        assert_eq!(
            encrypt(&vec![b'x'; MAX_PLAINTEXT + 1], &ua.public_key(), &[0; 16]),
            Err(CryptoError::TooLarge(MAX_PLAINTEXT + 1))
        );
        let compressed = ua.public_key().to_encoded_point(true);
        assert_eq!(
            parse_public_key(compressed.as_bytes()),
            Err(CryptoError::BadPublicKey)
        );
        let mut off_curve = public_key_bytes(&ua.public_key());
        off_curve[64] ^= 1;
        assert_eq!(parse_public_key(&off_curve), Err(CryptoError::BadPublicKey));
        assert!(parse_public_key(&[4; 10]).is_err());
        assert!(decrypt(&[0; 20], &ua, &[0; 16]).is_err());
    }
}
