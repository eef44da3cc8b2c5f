//! Connecting (credentials out of the URL) and messages larger than the NATS server's `max_payload`: their body goes to the JetStream object
//! store [`wire::OBJECTS_BUCKET`] and the message carries a sealed reference (name, size, SHA-256).

use sha2::Digest as _;

use super::{Cluster, wire};

impl Cluster {
    /// The most a message body may hold on this server: its `max_payload` less room for headers.
    pub(crate) fn max_body(&self) -> usize {
        self.client
            .server_info()
            .max_payload
            .saturating_sub(wire::HEADER_ROOM)
            .max(wire::HEADER_ROOM)
    }

    /// `body` as it travels on `subject`: as is when it fits in one message, else put in the object
    /// store under `name` and replaced by a reference (`Bridge-Object` header; the reference names
    /// its size and SHA-256, and the message's seal covers the reference).
    pub(super) async fn outsized(
        &self,
        name: &str,
        body: bytes::Bytes,
        headers: &mut async_nats::HeaderMap,
    ) -> anyhow::Result<bytes::Bytes> {
        if body.len() <= self.max_body() {
            return Ok(body);
        }
        let n = self.nats().ok_or_else(|| {
            anyhow::anyhow!("NATS has not been reachable since this relay started")
        })?;
        let digest = hex::encode(sha2::Sha256::digest(&body));
        n.objects.put(name, &mut &body[..]).await.map_err(|e| {
            anyhow::anyhow!(
                "cannot store a {} byte message in the object store: {e}",
                body.len()
            )
        })?;
        headers.insert(wire::OBJECT_HEADER, name);
        let reference = serde_json::json!({"object": name, "size": body.len(), "sha256": digest});
        Ok(bytes::Bytes::from(reference.to_string()))
    }

    /// The body a message carries: its payload, or the object its (sealed) reference names, checked
    /// against the reference's size and SHA-256. `delete`: the object is read once (a request).
    pub(super) async fn body_of(
        &self,
        headers: Option<&async_nats::HeaderMap>,
        payload: &bytes::Bytes,
        delete: bool,
    ) -> anyhow::Result<bytes::Bytes> {
        if headers.and_then(|h| h.get(wire::OBJECT_HEADER)).is_none() {
            return Ok(payload.clone());
        }
        use tokio::io::AsyncReadExt as _;
        let r: serde_json::Value = serde_json::from_slice(payload)?;
        let (Some(name), Some(size), Some(digest)) = (
            r["object"].as_str(),
            r["size"].as_u64(),
            r["sha256"].as_str(),
        ) else {
            anyhow::bail!("a malformed object reference");
        };
        let n = self.nats().ok_or_else(|| {
            anyhow::anyhow!("NATS has not been reachable since this relay started")
        })?;
        let mut object = n.objects.get(name).await?;
        let mut out = Vec::with_capacity(usize::try_from(size).unwrap_or(0).min(64 << 20));
        (&mut object).take(size + 1).read_to_end(&mut out).await?;
        if out.len() as u64 != size || hex::encode(sha2::Sha256::digest(&out)) != digest {
            anyhow::bail!("the object {name} is not what its reference says");
        }
        if delete {
            let _ = n.objects.delete(name).await;
        }
        Ok(bytes::Bytes::from(out))
    }
}

/// `nats://user:pass@host:port` → (`nats://host:port`, `Some((user, Some(pass)))`); a lone user
/// part is a token. Percent-escapes in them are decoded.
pub(super) fn split_credentials(url: &str) -> (String, Option<(String, Option<String>)>) {
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            let address = format!("{}{}", &url[..s + 3], &url[at + 1..]);
            let user = match creds.split_once(':') {
                Some((u, p)) => (decode(u), Some(decode(p))),
                None => (decode(creds), None),
            };
            (address, Some(user))
        }
        _ => (url.to_owned(), None),
    }
}
