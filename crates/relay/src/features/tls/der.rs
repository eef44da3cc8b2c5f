//! Reading a certificate's DER: just enough to find its public key and its expiry.

/// One DER element at the start of `der`: (tag, contents, rest). Definite lengths only, as DER has.
pub(super) fn der_element(der: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = der.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

/// The fields of a certificate's tbsCertificate after the optional version: serial, signature,
/// issuer, validity, subject, subjectPublicKeyInfo, … (each a whole DER element).
pub(super) fn tbs_fields(cert: &[u8]) -> Option<Vec<&[u8]>> {
    let (0x30, certificate, _) = der_element(cert)? else {
        return None;
    };
    let (0x30, tbs, _) = der_element(certificate)? else {
        return None;
    };
    let mut rest = tbs;
    let mut fields = Vec::new();
    while !rest.is_empty() {
        let (tag, _, after) = der_element(rest)?;
        if tag != 0xa0 {
            fields.push(&rest[..rest.len() - after.len()]);
        }
        rest = after;
    }
    Some(fields)
}

/// The certificate's subjectPublicKeyInfo (whole DER element).
pub(super) fn spki_of(cert: &[u8]) -> Option<Vec<u8>> {
    tbs_fields(cert)?.get(5).map(|f| f.to_vec())
}

/// The certificate's notAfter, in seconds since the Unix epoch.
pub(super) fn not_after(cert: &[u8]) -> Option<u64> {
    let fields = tbs_fields(cert)?;
    let (0x30, validity, _) = der_element(fields.get(3)?)? else {
        return None;
    };
    let (_, _, rest) = der_element(validity)?;
    let (tag, value, _) = der_element(rest)?;
    let s = std::str::from_utf8(value).ok()?.strip_suffix('Z')?;
    let (year, s) = match tag {
        // UTCTime: YYMMDDHHMMSSZ, years 1950–2049.
        0x17 if s.len() == 12 => {
            let yy: i32 = s[..2].parse().ok()?;
            (if yy < 50 { 2000 + yy } else { 1900 + yy }, &s[2..])
        }
        // GeneralizedTime: YYYYMMDDHHMMSSZ.
        0x18 if s.len() == 14 => (s[..4].parse().ok()?, &s[4..]),
        _ => return None,
    };
    let two = |i: usize| s.get(i..i + 2)?.parse::<u8>().ok();
    let date =
        time::Date::from_calendar_date(year, time::Month::try_from(two(0)?).ok()?, two(2)?).ok()?;
    let t = time::Time::from_hms(two(4)?, two(6)?, two(8)?).ok()?;
    u64::try_from(
        time::PrimitiveDateTime::new(date, t)
            .assume_utc()
            .unix_timestamp(),
    )
    .ok()
}
