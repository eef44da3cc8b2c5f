use super::*;

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn ca_of(tls: &Tls) -> &LocalCa {
    tls.ca.as_ref().expect("--tls-self-signed has a local CA")
}

#[test]
fn a_local_ca_issues_the_server_certificate_and_both_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let tls_dir = dir.path().join("tls");
    let first = load(
        &CertSource::SelfSigned,
        dir.path(),
        &names(&["localhost", "127.0.0.1"]),
    )
    .unwrap();
    assert_eq!(first.provenance, Provenance::Made);
    let ca = ca_of(&first).clone();
    assert_eq!(ca.provenance, Provenance::Made);
    assert_eq!(ca.path, tls_dir.join("ca.pem"));
    assert_eq!(mode(&tls_dir), 0o700);
    assert_eq!(mode(&tls_dir.join("key.pem")), 0o600);
    assert_eq!(mode(&tls_dir.join("ca-key.pem")), 0o600);
    // cert.pem: the leaf first, then the CA; ca.pem: the CA.
    let chain = read_chain(&tls_dir.join("cert.pem")).unwrap();
    assert_eq!(chain, vec![first.cert.clone(), ca.cert.clone()]);
    assert_eq!(read_chain(&ca.path).unwrap(), vec![ca.cert.clone()]);
    assert_eq!(fs::read_to_string(&ca.path).unwrap(), ca.pem());
    // The CA and the key it keeps belong together.
    let ca_key =
        rcgen::KeyPair::from_pem(&fs::read_to_string(tls_dir.join("ca-key.pem")).unwrap()).unwrap();
    assert_eq!(
        rcgen::PublicKeyData::subject_public_key_info(&ca_key),
        spki_of(&ca.cert).unwrap()
    );
    let now = UnixTime::now();
    assert!(covers(&first.cert, &ca.cert, "localhost", now));
    assert!(covers(&first.cert, &ca.cert, "127.0.0.1", now));
    // Not self-signed: trusting the leaf alone does not make a chain.
    assert!(!covers(&first.cert, &first.cert, "localhost", now));
    // At most 800 days (Apple's limit is 825), the CA for 825 (it was ten years).
    let leaf_end = not_after(&first.cert).unwrap();
    let ca_end = not_after(&ca.cert).unwrap();
    let days = |t: u64| (t - now.as_secs()) / 86_400;
    assert!((799..=800).contains(&days(leaf_end)), "{}", days(leaf_end));
    assert!((824..=825).contains(&days(ca_end)), "{}", days(ca_end));

    // Same names (or fewer): both reused.
    let again = load(&CertSource::SelfSigned, dir.path(), &names(&["127.0.0.1"])).unwrap();
    assert_eq!(again.provenance, Provenance::Reused);
    assert_eq!(again.fingerprint(), first.fingerprint());
    assert_eq!(ca_of(&again).provenance, Provenance::Reused);
    assert_eq!(ca_of(&again).cert, ca.cert);

    // A new name: the CA vouches for exactly the names it was made for, so a new CA (devices
    // install it again) and a new leaf covering all of them.
    let wider = names(&["mybox.lan", "192.168.1.20", "localhost"]);
    let new = load(&CertSource::SelfSigned, dir.path(), &wider).unwrap();
    assert_eq!(new.provenance, Provenance::Made);
    assert_ne!(new.fingerprint(), first.fingerprint());
    assert_eq!(ca_of(&new).provenance, Provenance::Made);
    assert_ne!(ca_of(&new).cert, ca.cert);
    let ca = ca_of(&new).clone();
    for n in &wider {
        assert!(covers(&new.cert, &ca.cert, n, now), "{n}");
    }
    assert!(!covers(&new.cert, &ca.cert, "127.0.0.1", now));
    assert!(!covers(&new.cert, &ca.cert, "other.lan", now));
    // Fewer names: kept as it is.
    let fewer = load(&CertSource::SelfSigned, dir.path(), &names(&["mybox.lan"])).unwrap();
    assert_eq!(fewer.provenance, Provenance::Reused);
    // Not valid forever: made again before it expires.
    let later = UnixTime::since_unix_epoch(Duration::from_secs(
        now.as_secs() + (SELF_SIGNED_DAYS as u64 + 1) * 24 * 3600,
    ));
    assert!(!covers(&new.cert, &ca.cert, "mybox.lan", later));
}

#[test]
fn the_ca_vouches_only_for_the_configured_names_and_lives_825_days() {
    let dir = tempfile::tempdir().unwrap();
    let first = load(
        &CertSource::SelfSigned,
        dir.path(),
        &names(&["mybox.lan", "localhost", "127.0.0.1"]),
    )
    .unwrap();
    let ca = ca_of(&first).clone();
    let tls_dir = dir.path().join("tls");
    let ca_material = read_ca(
        &tls_dir.join("ca.pem"),
        &tls_dir.join("ca-key.pem"),
        UnixTime::now(),
    )
    .unwrap();
    let now = UnixTime::now();
    // What a stolen CA key could sign: the configured names, nothing else on the LAN or beyond.
    let end = not_after(&ca.cert).unwrap();
    let days = (end - now.as_secs()) / (24 * 3600);
    assert!((823..=825).contains(&days), "{days} days");
    for (name, ok) in [
        ("mybox.lan", true),
        ("www.mybox.lan", true),
        ("127.0.0.1", true),
        ("localhost", true),
        ("printer.lan", false),
        ("nas.local", false),
        ("box.home.arpa", false),
        ("10.1.2.3", false),
        ("127.0.0.2", false),
        ("192.168.7.7", false),
        ("100.101.102.103", false),
        ("fd00::1", false),
        ("www.example.com", false),
        ("bank.com", false),
        ("lan.example.com", false),
        ("8.8.8.8", false),
        ("2001:db8::1", false),
    ] {
        let (pem, _) = issue_leaf(&ca_material, &names(&[name])).unwrap();
        let leaf = CertificateDer::from_pem_slice(pem.as_bytes()).unwrap();
        assert_eq!(covers(&leaf, &ca.cert, name, now), ok, "{name}");
    }

    // A public name given later is beyond the kept CA: a new CA for it (phones reinstall).
    let public = names(&["box.example.org", "203.0.113.9", "localhost"]);
    let moved = load(&CertSource::SelfSigned, dir.path(), &public).unwrap();
    assert_eq!(moved.provenance, Provenance::Made);
    let new_ca = ca_of(&moved);
    assert_eq!(new_ca.provenance, Provenance::Made);
    assert_ne!(new_ca.cert, ca.cert);
    for n in &public {
        assert!(covers(&moved.cert, &new_ca.cert, n, now), "{n}");
    }
    let again = load(&CertSource::SelfSigned, dir.path(), &public).unwrap();
    assert_eq!(again.provenance, Provenance::Reused);
    assert_eq!(ca_of(&again).cert, new_ca.cert);
}

#[test]
fn name_constraints_are_exactly_the_configured_names() {
    let c = name_constraints(&names(&[
        "mybox.lan",
        "Box.Example.org.",
        "localhost",
        "127.0.0.1",
        "192.168.1.20",
        "2001:db8::1",
        "mybox.lan",
    ]));
    assert!(c.excluded_subtrees.is_empty());
    assert_eq!(
        c.permitted_subtrees,
        vec![
            rcgen::GeneralSubtree::DnsName("mybox.lan".into()),
            rcgen::GeneralSubtree::DnsName("box.example.org".into()),
            rcgen::GeneralSubtree::DnsName("localhost".into()),
            rcgen::GeneralSubtree::IpAddress(rcgen::CidrSubnet::from_v4_prefix([127, 0, 0, 1], 32)),
            rcgen::GeneralSubtree::IpAddress(rcgen::CidrSubnet::from_v4_prefix(
                [192, 168, 1, 20],
                32
            )),
            rcgen::GeneralSubtree::IpAddress(rcgen::CidrSubnet::from_addr_prefix(
                "2001:db8::1".parse().unwrap(),
                128
            )),
        ]
    );
}

#[test]
fn with_the_ca_key_deleted_its_certificate_is_used_until_renewal() {
    let dir = tempfile::tempdir().unwrap();
    let n = names(&["127.0.0.1", "localhost"]);
    let first = load(&CertSource::SelfSigned, dir.path(), &n).unwrap();
    std::fs::remove_file(dir.path().join("tls/ca-key.pem")).unwrap();
    let again = load(&CertSource::SelfSigned, dir.path(), &n).unwrap();
    assert_eq!(again.provenance, Provenance::Reused);
    assert_eq!(again.fingerprint(), first.fingerprint());
    assert_eq!(ca_of(&again).cert, ca_of(&first).cert);
    assert!(
        !dir.path().join("tls/ca-key.pem").exists(),
        "no key made again"
    );
    // A name the kept certificate does not cover: a new CA (and its key) is the only way.
    let more = load(
        &CertSource::SelfSigned,
        dir.path(),
        &names(&["127.0.0.1", "mybox.lan"]),
    )
    .unwrap();
    assert_eq!(ca_of(&more).provenance, Provenance::Made);
    assert!(dir.path().join("tls/ca-key.pem").exists());
}

#[test]
fn a_broken_or_old_layout_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let tls_dir = dir.path().join("tls");
    fs::create_dir_all(&tls_dir).unwrap();
    // The layout before the local CA: a self-signed cert.pem and key.pem.
    let (cert, key) = make_self_signed(&names(&["localhost"])).unwrap();
    fs::write(tls_dir.join("cert.pem"), &cert).unwrap();
    fs::write(tls_dir.join("key.pem"), &key).unwrap();
    let tls = load(&CertSource::SelfSigned, dir.path(), &names(&["localhost"])).unwrap();
    assert_eq!(tls.provenance, Provenance::Made);
    assert_eq!(ca_of(&tls).provenance, Provenance::Made);
    let first_ca = ca_of(&tls).cert.clone();

    // A CA key that is not the CA certificate's: a new CA.
    let (_, other_key) = make_self_signed(&names(&["localhost"])).unwrap();
    fs::write(tls_dir.join("ca-key.pem"), &other_key).unwrap();
    let tls = load(&CertSource::SelfSigned, dir.path(), &names(&["localhost"])).unwrap();
    assert_eq!(ca_of(&tls).provenance, Provenance::Made);
    assert_ne!(ca_of(&tls).cert, first_ca);
    assert!(covers(
        &tls.cert,
        &ca_of(&tls).cert,
        "localhost",
        UnixTime::now()
    ));

    // A lost server key: a new leaf from the kept CA.
    let kept_ca = ca_of(&tls).cert.clone();
    fs::remove_file(tls_dir.join("key.pem")).unwrap();
    let tls = load(&CertSource::SelfSigned, dir.path(), &names(&["localhost"])).unwrap();
    assert_eq!(tls.provenance, Provenance::Made);
    assert_eq!(ca_of(&tls).provenance, Provenance::Reused);
    assert_eq!(ca_of(&tls).cert, kept_ca);
}

#[test]
fn reads_the_validity_and_key_of_a_certificate() {
    let (pem, key) = make_self_signed(&names(&["a.lan"])).unwrap();
    let der = CertificateDer::from_pem_slice(pem.as_bytes()).unwrap();
    let key = rcgen::KeyPair::from_pem(&key).unwrap();
    assert_eq!(
        spki_of(&der).unwrap(),
        rcgen::PublicKeyData::subject_public_key_info(&key)
    );
    let end = not_after(&der).unwrap();
    let expected = (time::OffsetDateTime::now_utc() + time::Duration::days(SELF_SIGNED_DAYS))
        .unix_timestamp() as u64;
    assert!(end.abs_diff(expected) < 120, "{end} vs {expected}");
    assert_eq!(not_after(b"\x30\x03\x02\x01\x00"), None);
    assert_eq!(not_after(b""), None);
    assert!(pem_certificate(&der) == pem.replace("\r\n", "\n"));
}

#[test]
fn given_files_must_be_a_matching_pair() {
    let dir = tempfile::tempdir().unwrap();
    let (cert_a, key_a) = make_self_signed(&names(&["a.lan"])).unwrap();
    let (_, key_b) = make_self_signed(&names(&["b.lan"])).unwrap();
    let p = |n: &str, s: &str| {
        let path = dir.path().join(n);
        fs::write(&path, s).unwrap();
        path
    };
    let (ca, ka, kb) = (p("a.pem", &cert_a), p("a.key", &key_a), p("b.key", &key_b));
    let tls = load(
        &CertSource::Files {
            cert: ca.clone(),
            key: ka,
        },
        dir.path(),
        &[],
    )
    .unwrap();
    assert_eq!(tls.provenance, Provenance::Given);
    let der = CertificateDer::from_pem_slice(cert_a.as_bytes()).unwrap();
    assert_eq!(tls.fingerprint(), fingerprint(&der));
    assert_eq!(tls.fingerprint().len(), 32 * 3 - 1);
    let err = load(
        &CertSource::Files {
            cert: ca.clone(),
            key: kb,
        },
        dir.path(),
        &[],
    )
    .unwrap_err();
    assert!(format!("{err:#}").contains("is this the key"), "{err:#}");
    let err = load(
        &CertSource::Files {
            cert: ca,
            key: dir.path().join("none"),
        },
        dir.path(),
        &[],
    )
    .unwrap_err();
    assert!(format!("{err:#}").contains("--tls-key"), "{err:#}");
}
