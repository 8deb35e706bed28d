#!/usr/bin/env python3
"""The GCS and Azure Blob emulators of the local control plane, over raw HTTP (standard library only).

  object-stores.py init-gcs ENV_FILE     create the bucket named in gcs.env (idempotent)
  object-stores.py init-azure ENV_FILE   create the container named in azure.env (idempotent)
  object-stores.py ping-gcs ENV_FILE     exit 0 when the bucket answers
  object-stores.py ping-azure ENV_FILE   exit 0 when the container answers (SharedKey-signed)
  object-stores.py check [STATE_DIR]     check the conditional-write and conditional-read semantics
                                         each emulator honours (see testenv/README.md); exits 1
                                         naming every expectation that did not hold

STATE_DIR defaults to $CELLD_TESTENV_DIR or .testenv/ at the repository root. `check` fails (never
skips) when the emulators are not up. up.sh and restart.sh use init-* and ping-*.

celld writes deploy/current.json with compare-and-swap; these are the requests an object-store
client would send for it: GCS (JSON API) ifGenerationMatch=0 / =<generation>, Azure
If-None-Match: * / If-Match: <etag>, and a conditional GET with If-None-Match: <etag>.
"""

import base64
import email.utils
import hashlib
import hmac
import http.client
import json
import os
import sys
import urllib.parse
import uuid

TIMEOUT = 5
AZURE_API_VERSION = "2021-12-02"


def read_env(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        sys.exit(f"object-stores: {path} does not exist: the local control plane is not up (run 'make cluster-up')")
    env = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            k, v = line.split("=", 1)
            env[k.strip()] = v.strip().strip('"')
    return env


def request(endpoint, method, path, headers=None, body=b""):
    """One HTTP request; returns (status, lower-cased headers, body bytes)."""
    u = urllib.parse.urlsplit(endpoint)
    if u.scheme != "http" or u.hostname != "127.0.0.1":
        sys.exit(f"object-stores: refusing non-loopback or non-http endpoint {endpoint}")
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=TIMEOUT)
    try:
        h = dict(headers or {})
        h.setdefault("Content-Length", str(len(body)))
        conn.request(method, path, body=body, headers=h)
        r = conn.getresponse()
        data = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data
    finally:
        conn.close()


# --- GCS (fake-gcs-server; JSON API, no authentication) ----------------------------------------


class Gcs:
    def __init__(self, env):
        self.endpoint = env["GCS_ENDPOINT"]
        self.bucket = env["GCS_BUCKET"]
        self.project = env.get("GCS_PROJECT", "celld-test")

    def q(self, s):
        return urllib.parse.quote(s, safe="")

    def create_bucket(self):
        st, _, body = request(
            self.endpoint, "POST", f"/storage/v1/b?project={self.q(self.project)}",
            {"Content-Type": "application/json"}, json.dumps({"name": self.bucket}).encode())
        if st not in (200, 409):
            sys.exit(f"object-stores: creating GCS bucket {self.bucket} failed: HTTP {st} {body[:300]!r}")
        self.ping()

    def ping(self):
        st, _, body = request(self.endpoint, "GET", f"/storage/v1/b/{self.q(self.bucket)}")
        if st != 200:
            sys.exit(f"object-stores: GCS bucket {self.bucket} does not answer: HTTP {st} {body[:300]!r}")

    def upload(self, name, data, **conditions):
        """objects.insert, uploadType=media; conditions become query parameters (ifGenerationMatch)."""
        query = {"uploadType": "media", "name": name, **{k: str(v) for k, v in conditions.items()}}
        st, h, body = request(
            self.endpoint, "POST",
            f"/upload/storage/v1/b/{self.q(self.bucket)}/o?{urllib.parse.urlencode(query)}",
            {"Content-Type": "application/json"}, data)
        meta = json.loads(body) if st == 200 else None
        return st, meta

    def xml_put(self, name, data, headers):
        """The XML API's simple PUT (what object_store's GCS client sends), with x-goog-* headers."""
        return request(self.endpoint, "PUT", f"/{self.q(self.bucket)}/{urllib.parse.quote(name)}",
                       {"Content-Type": "application/json", **headers}, data)

    def media_get(self, name, headers=None, **query):
        q = urllib.parse.urlencode({"alt": "media", **{k: str(v) for k, v in query.items()}})
        return request(self.endpoint, "GET", f"/storage/v1/b/{self.q(self.bucket)}/o/{self.q(name)}?{q}", headers)

    def xml_get(self, name, headers=None):
        return request(self.endpoint, "GET", f"/{self.q(self.bucket)}/{urllib.parse.quote(name)}", headers)


# --- Azure Blob (Azurite; SharedKey with the account key) --------------------------------------


class Azure:
    def __init__(self, env):
        self.endpoint = env["AZURITE_BLOB_STORAGE_URL"]
        self.account = env["AZURE_STORAGE_ACCOUNT_NAME"]
        self.key = base64.b64decode(env["AZURE_STORAGE_ACCOUNT_KEY"])
        self.container = env["AZURE_STORAGE_CONTAINER"]

    def send(self, method, resource, query=None, headers=None, body=b""):
        """A SharedKey-signed request on path-style /ACCOUNT/RESOURCE (how Azurite addresses accounts)."""
        path = f"/{self.account}/{urllib.parse.quote(resource)}"
        query = query or {}
        h = {
            "x-ms-date": email.utils.formatdate(usegmt=True),
            "x-ms-version": AZURE_API_VERSION,
            "Content-Length": str(len(body)),
            **(headers or {}),
        }
        lower = {k.lower(): v for k, v in h.items()}
        length = lower.get("content-length", "")
        sts = "\n".join([
            method,
            lower.get("content-encoding", ""),
            lower.get("content-language", ""),
            "" if length == "0" else length,
            lower.get("content-md5", ""),
            lower.get("content-type", ""),
            "",  # Date: x-ms-date is used instead
            lower.get("if-modified-since", ""),
            lower.get("if-match", ""),
            lower.get("if-none-match", ""),
            lower.get("if-unmodified-since", ""),
            lower.get("range", ""),
        ]) + "\n"
        sts += "".join(f"{k}:{lower[k].strip()}\n" for k in sorted(lower) if k.startswith("x-ms-"))
        sts += f"/{self.account}{path}"
        for k in sorted(query, key=str.lower):
            sts += f"\n{k.lower()}:{query[k]}"
        sig = base64.b64encode(hmac.new(self.key, sts.encode(), hashlib.sha256).digest()).decode()
        h["Authorization"] = f"SharedKey {self.account}:{sig}"
        if query:
            path += "?" + urllib.parse.urlencode(query)
        return request(self.endpoint, method, path, h, body)

    def create_container(self):
        st, _, body = self.send("PUT", self.container, {"restype": "container"})
        if st not in (201, 409):
            sys.exit(f"object-stores: creating Azure container {self.container} failed: HTTP {st} {body[:300]!r}")
        self.ping()

    def ping(self):
        st, _, body = self.send("GET", self.container, {"restype": "container"})
        if st != 200:
            sys.exit(f"object-stores: Azure container {self.container} does not answer: HTTP {st} {body[:300]!r}")

    def put(self, name, data, headers=None):
        return self.send("PUT", f"{self.container}/{name}", None,
                         {"x-ms-blob-type": "BlockBlob", "Content-Type": "application/json", **(headers or {})}, data)

    def get(self, name, headers=None):
        return self.send("GET", f"{self.container}/{name}", None, headers)


# --- check ------------------------------------------------------------------------------------


class Checker:
    def __init__(self):
        self.failures = 0

    def expect(self, store, what, ok, detail):
        print(f"  {'ok  ' if ok else 'FAIL'} {store}: {what}" + ("" if ok else f" ({detail})"))
        if not ok:
            self.failures += 1
        return ok


def check_gcs(c, gcs):
    key = f"check-{uuid.uuid4().hex[:8]}/deploy/current.json"
    st, m1 = gcs.upload(key, b'{"v":1}', ifGenerationMatch=0)
    if not c.expect("gcs", "create-only write (ifGenerationMatch=0) of a new object: 200", st == 200, f"HTTP {st}"):
        return
    gen1 = m1["generation"]
    st, _ = gcs.upload(key, b'{"v":9}', ifGenerationMatch=0)
    c.expect("gcs", "create-only write of an existing object: 412", st == 412, f"HTTP {st}")
    st, m2 = gcs.upload(key, b'{"v":2}', ifGenerationMatch=gen1)
    c.expect("gcs", "compare-and-swap (ifGenerationMatch=<current generation>): 200, new generation",
             st == 200 and m2["generation"] != gen1, f"HTTP {st}, generation {m2 and m2['generation']} (was {gen1})")
    gen2 = m2["generation"] if m2 else None
    st, _ = gcs.upload(key, b'{"v":8}', ifGenerationMatch=gen1)
    c.expect("gcs", "compare-and-swap with a stale generation: 412", st == 412, f"HTTP {st}")
    st, _, body = gcs.media_get(key)
    c.expect("gcs", "the refused writes changed nothing", st == 200 and body == b'{"v":2}', f"HTTP {st} {body!r}")
    # Same bytes again: the generation still changes (unlike an MD5 ETag), so a CAS notices it.
    st, m3 = gcs.upload(key, b'{"v":2}', ifGenerationMatch=gen2)
    c.expect("gcs", "rewriting the same bytes gets a new generation",
             st == 200 and m3["generation"] != gen2, f"HTTP {st}, {m3 and m3['generation']} vs {gen2}")
    gen3 = m3["generation"] if m3 else None
    st, h, _ = gcs.media_get(key)
    etag = h.get("etag", "")
    c.expect("gcs", "a media GET returns ETag and x-goog-generation",
             st == 200 and etag and h.get("x-goog-generation") == gen3, f"HTTP {st}, headers {h}")
    # Known gaps of fake-gcs-server (see testenv/README.md). They are checked as gaps so that an
    # upgrade that closes one fails here and the README gets updated, never silently.
    st, _, _ = gcs.media_get(key, {"If-None-Match": etag})
    c.expect("gcs", "GAP: GET with If-None-Match: <current ETag> is not honoured (200, not 304)", st == 200, f"HTTP {st}")
    st, _, _ = gcs.media_get(key, ifGenerationNotMatch=gen3)
    c.expect("gcs", "GAP: GET with ifGenerationNotMatch=<current generation> is not honoured (200, not 304)",
             st == 200, f"HTTP {st}")
    st, _, _ = gcs.xml_get(key, {"If-None-Match": etag})
    c.expect("gcs", "GAP: XML API GET with If-None-Match: <current ETag> is not honoured (200, not 304)",
             st == 200, f"HTTP {st}")
    st, _, body = gcs.xml_put(key, b'{"v":7}', {"x-goog-if-generation-match": "0"})
    c.expect("gcs", "GAP: XML API PUT (x-goog-if-generation-match) is not served (400 invalid uploadType)",
             st == 400 and b"invalid uploadType" in body, f"HTTP {st} {body[:200]!r}")
    st, _, body = gcs.media_get(key)
    c.expect("gcs", "the XML API PUT changed nothing", st == 200 and body == b'{"v":2}', f"HTTP {st} {body!r}")


def check_azure(c, az):
    key = f"check-{uuid.uuid4().hex[:8]}/deploy/current.json"
    st, h, body = az.put(key, b'{"v":1}', {"If-None-Match": "*"})
    if not c.expect("azure", "create-only write (If-None-Match: *) of a new blob: 201", st == 201,
                    f"HTTP {st} {body[:200]!r}"):
        return
    etag1 = h.get("etag")
    st, h, body = az.put(key, b'{"v":9}', {"If-None-Match": "*"})
    c.expect("azure", "create-only write of an existing blob: 409 BlobAlreadyExists",
             st == 409 and h.get("x-ms-error-code") == "BlobAlreadyExists", f"HTTP {st} {h.get('x-ms-error-code')}")
    st, h, body = az.put(key, b'{"v":2}', {"If-Match": etag1})
    etag2 = h.get("etag")
    c.expect("azure", "compare-and-swap (If-Match: <current ETag>): 201, new ETag",
             st == 201 and etag2 and etag2 != etag1, f"HTTP {st}, ETag {etag2} (was {etag1})")
    st, h, _ = az.put(key, b'{"v":8}', {"If-Match": etag1})
    c.expect("azure", "compare-and-swap with a stale ETag: 412 ConditionNotMet",
             st == 412 and h.get("x-ms-error-code") == "ConditionNotMet", f"HTTP {st} {h.get('x-ms-error-code')}")
    st, h, body = az.get(key)
    c.expect("azure", "the refused writes changed nothing", st == 200 and body == b'{"v":2}', f"HTTP {st} {body!r}")
    st, h, _ = az.put(key, b'{"v":2}', {"If-Match": etag2})
    etag3 = h.get("etag")
    c.expect("azure", "rewriting the same bytes gets a new ETag", st == 201 and etag3 and etag3 != etag2,
             f"HTTP {st}, ETag {etag3} vs {etag2}")
    st, h, body = az.get(key, {"If-None-Match": etag3})
    c.expect("azure", "GET with If-None-Match: <current ETag>: 304, no body", st == 304 and body == b"",
             f"HTTP {st} {body[:100]!r}")
    st, h, body = az.get(key, {"If-None-Match": etag2})
    c.expect("azure", "GET with If-None-Match: <stale ETag>: 200 with the body",
             st == 200 and body == b'{"v":2}' and h.get("etag") == etag3, f"HTTP {st} {body!r}")


def state_dir(arg):
    if arg:
        return arg
    if os.environ.get("CELLD_TESTENV_DIR"):
        return os.environ["CELLD_TESTENV_DIR"]
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".testenv")


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    cmd, args = argv[1], argv[2:]
    if cmd in ("init-gcs", "ping-gcs", "init-azure", "ping-azure"):
        if len(args) != 1:
            sys.exit(f"usage: object-stores.py {cmd} ENV_FILE")
        env = read_env(args[0])
        store = Gcs(env) if cmd.endswith("gcs") else Azure(env)
        if cmd == "init-gcs":
            store.create_bucket()
        elif cmd == "init-azure":
            store.create_container()
        else:
            store.ping()
        return 0
    if cmd == "check":
        if len(args) > 1:
            sys.exit("usage: object-stores.py check [STATE_DIR]")
        state = state_dir(args[0] if args else None)
        gcs, az = Gcs(read_env(os.path.join(state, "gcs.env"))), Azure(read_env(os.path.join(state, "azure.env")))
        c = Checker()
        for name, fn, store in (("GCS (fake-gcs-server)", check_gcs, gcs), ("Azure Blob (Azurite)", check_azure, az)):
            print(f"{name} at {store.endpoint}:")
            try:
                fn(c, store)
            except (OSError, ValueError, KeyError) as e:
                c.expect(name, "requests complete", False, repr(e))
        if c.failures:
            print(f"object-stores: {c.failures} expectation(s) failed", file=sys.stderr)
            return 1
        print("object-stores: every expectation held")
        return 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
