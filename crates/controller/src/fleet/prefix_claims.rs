//! Bucket prefixes claimed by fleets: a fleet whose prefix equals, contains or lies inside the
//! prefix of another fleet on the same bucket of the same store (any namespace) would read and
//! write that fleet's deployments and node state, so only the first claimant is reconciled into
//! nodes; the others are `PrefixClaimed` and told nothing of the claimant.
//!
//! "First" is the claim's age, not the fleet's: a fleet that serves a prefix (its status says
//! so) holds it since it was created; a fleet that moves to a new prefix claims it when the
//! operator first sees it there. An old fleet edited onto a younger fleet's prefix therefore
//! does not take it over. The index is kept in memory, filled from the fleets' cache the first
//! time and whenever the cache holds fleets it has not recorded yet, and updated by each
//! fleet's reconcile: a look-up costs the depth of the prefix and the claims it overlaps, not
//! the number of fleets.

use crate::cache::caches::Caches;
use crate::locks::lock;
use celld_api::bucket::Scheme;
use celld_api::{CelldFleet, ResolveError, ResolvedStorage, resolve};
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;

/// One bucket of one store: the claims on its prefixes compete.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Place {
    scheme: Scheme,
    /// The S3 endpoint (None: AWS) or the Azure storage account, lower case, no trailing `/`.
    connection: Option<String>,
    bucket: String,
}

impl Place {
    fn of(storage: &ResolvedStorage) -> Self {
        let connection = match storage.bucket.scheme {
            Scheme::S3 => storage.endpoint.as_deref(),
            Scheme::Azure => storage.azure_storage_account.as_deref(),
            Scheme::Gcs => None,
        };
        Self {
            scheme: storage.bucket.scheme,
            connection: connection.map(|c| c.trim_end_matches('/').to_ascii_lowercase()),
            bucket: storage.bucket.name.clone(),
        }
    }
}

/// How old a claim is: seconds since the epoch, then the fleet's uid.
type Age = (i64, String);

/// What a fleet claims: a prefix of a place (none when its storage does not resolve).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Claim {
    place: Option<Place>,
    prefix: String,
    age: Age,
}

/// The claims, by fleet and by place and prefix.
#[derive(Debug, Default)]
struct Index {
    by_fleet: HashMap<String, Claim>,
    by_place: HashMap<Place, BTreeMap<String, BTreeSet<Age>>>,
}

impl Index {
    /// Records `claim` as the fleet `uid`'s, replacing its previous one.
    fn record(&mut self, uid: &str, claim: Claim) {
        self.forget(uid);
        if let Some(place) = &claim.place {
            self.by_place
                .entry(place.clone())
                .or_default()
                .entry(claim.prefix.clone())
                .or_default()
                .insert(claim.age.clone());
        }
        self.by_fleet.insert(uid.to_string(), claim);
    }

    fn forget(&mut self, uid: &str) {
        let Some(old) = self.by_fleet.remove(uid) else {
            return;
        };
        let Some(place) = old.place else { return };
        if let Some(prefixes) = self.by_place.get_mut(&place) {
            if let Some(ages) = prefixes.get_mut(&old.prefix) {
                ages.remove(&old.age);
                if ages.is_empty() {
                    prefixes.remove(&old.prefix);
                }
            }
            if prefixes.is_empty() {
                self.by_place.remove(&place);
            }
        }
    }

    /// Whether a claim older than `claim` overlaps it: on its prefix, one containing it, or
    /// one inside it.
    fn older_overlaps(&self, claim: &Claim) -> bool {
        let Some(prefixes) = claim.place.as_ref().and_then(|p| self.by_place.get(p)) else {
            return false;
        };
        let older = |ages: &BTreeSet<Age>| ages.first().is_some_and(|a| *a < claim.age);
        let mut containing = vec![String::new()];
        let mut path = String::new();
        for segment in claim.prefix.split('/').filter(|s| !s.is_empty()) {
            if !path.is_empty() {
                path.push('/');
            }
            path.push_str(segment);
            containing.push(path.clone());
        }
        if containing.iter().filter_map(|p| prefixes.get(p)).any(older) {
            return true;
        }
        if claim.prefix.is_empty() {
            return prefixes.values().any(older);
        }
        let below = format!("{}/", claim.prefix);
        prefixes
            .range(below.clone()..)
            .take_while(|(p, _)| p.starts_with(&below))
            .any(|(_, ages)| older(ages))
    }
}

/// The fleets' claims on bucket prefixes.
#[derive(Debug, Default)]
pub struct PrefixClaims {
    index: Mutex<Index>,
}

/// Whether `fleet`'s status says it serves `storage` (and was not refused it).
fn serves(fleet: &CelldFleet, storage: &ResolvedStorage) -> bool {
    let Some(status) = &fleet.status else {
        return false;
    };
    let refused = celld_api::conditions::find(&status.conditions, celld_api::conditions::DEGRADED)
        .is_some_and(|c| c.reason == celld_api::reasons::Reason::PrefixClaimed.as_str());
    let shown = storage.to_status();
    !refused
        && status
            .storage
            .as_ref()
            .is_some_and(|s| s.bucket == shown.bucket && s.endpoint == shown.endpoint)
}

/// The claim of `fleet` on `storage`: as old as the fleet when it serves it, `now` otherwise.
fn claim_of(fleet: &CelldFleet, uid: &str, storage: &ResolvedStorage, now: i64) -> Claim {
    let since = match &fleet.metadata.creation_timestamp {
        Some(created) if serves(fleet, storage) => created.0.as_second(),
        _ => now,
    };
    Claim {
        place: Some(Place::of(storage)),
        prefix: storage.bucket.prefix.clone(),
        age: (since, uid.to_string()),
    }
}

/// The storage of `fleet` from the caches alone (its store from the stores' cache), if it
/// resolves.
fn cached_storage(caches: &Caches, fleet: &CelldFleet) -> Option<ResolvedStorage> {
    let ns = fleet.namespace()?;
    let store = match &fleet.spec.store_ref {
        None => None,
        Some(r) => Some(caches.store(&ns, &r.name)?.0.as_ref().ok()?.clone()),
    };
    resolve::resolve(&fleet.spec, &ns, store.as_ref()).ok()
}

impl PrefixClaims {
    /// Records the claim of `fleet` (uid `uid`) on `storage`; PrefixClaimed when an older
    /// claim overlaps it.
    pub fn claim(
        &self,
        caches: &Caches,
        fleet: &CelldFleet,
        uid: &str,
        storage: &ResolvedStorage,
    ) -> Result<(), ResolveError> {
        let now = Timestamp::now().as_second();
        let mut index = lock(&self.index);
        if caches.fleets.len() > index.by_fleet.len() {
            record_unrecorded(&mut index, caches, now);
        }
        let mut claim = claim_of(fleet, uid, storage, now);
        if let Some(held) = index.by_fleet.get(uid)
            && held.place == claim.place
            && held.prefix == claim.prefix
        {
            claim.age = held.age.clone().min(claim.age);
        }
        // Its own previous claim (a prefix it moves away from) does not count against it.
        index.forget(uid);
        let refused = index.older_overlaps(&claim);
        index.record(uid, claim);
        if refused {
            let (ns, name) = (fleet.namespace().unwrap_or_default(), fleet.name_any());
            let bucket = &storage.bucket;
            return Err(ResolveError::PrefixClaimed {
                bucket: bucket.to_string(),
                example: format!("{}{}/{ns}/{name}", bucket.scheme.prefix(), bucket.name),
            });
        }
        Ok(())
    }

    /// Keeps the claims of the fleets whose uid `live` keeps.
    pub fn retain(&self, live: impl Fn(&str) -> bool) {
        let mut index = lock(&self.index);
        let gone: Vec<String> = index
            .by_fleet
            .keys()
            .filter(|uid| !live(uid))
            .cloned()
            .collect();
        for uid in gone {
            index.forget(&uid);
        }
    }
}

/// Records the fleets of the cache the index does not hold yet.
fn record_unrecorded(index: &mut Index, caches: &Caches, now: i64) {
    for guard in caches.fleets.state() {
        let Ok(fleet) = &guard.0 else { continue };
        let Some(uid) = fleet.uid() else { continue };
        if index.by_fleet.contains_key(&uid) {
            continue;
        }
        let claim = match cached_storage(caches, fleet) {
            Some(storage) => claim_of(fleet, &uid, &storage, now),
            None => Claim {
                place: None,
                prefix: String::new(),
                age: (now, uid.clone()),
            },
        };
        index.record(&uid, claim);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(bucket: &str) -> Option<Place> {
        Some(Place {
            scheme: Scheme::S3,
            connection: Some("http://127.0.0.1:9000".into()),
            bucket: bucket.into(),
        })
    }

    fn claim(bucket: &str, prefix: &str, since: i64, uid: &str) -> Claim {
        Claim {
            place: place(bucket),
            prefix: prefix.into(),
            age: (since, uid.into()),
        }
    }

    #[test]
    fn equal_containing_and_inside_prefixes_overlap_siblings_do_not() {
        let mut index = Index::default();
        index.record("a", claim("b", "apps/web", 10, "a"));
        for (prefix, overlaps) in [
            ("apps/web", true),
            ("apps", true),
            ("", true),
            ("apps/web/previews", true),
            ("apps/web-2", false),
            ("apps/we", false),
            ("other", false),
        ] {
            assert_eq!(
                index.older_overlaps(&claim("b", prefix, 20, "z")),
                overlaps,
                "{prefix}"
            );
        }
        assert!(
            !index.older_overlaps(&claim("other-bucket", "apps/web", 20, "z")),
            "another bucket"
        );
        let mut elsewhere = claim("b", "apps/web", 20, "z");
        elsewhere.place = Some(Place {
            connection: Some("https://s3.example.com".into()),
            ..place("b").unwrap()
        });
        assert!(!index.older_overlaps(&elsewhere), "another store");
    }

    #[test]
    fn the_first_claimant_keeps_it_and_a_forgotten_claim_frees_it() {
        let mut index = Index::default();
        index.record("old", claim("b", "web", 10, "old"));
        index.record("new", claim("b", "web/x", 20, "new"));
        assert!(index.older_overlaps(&claim("b", "web/x", 20, "new")));
        assert!(
            !index.older_overlaps(&claim("b", "web", 10, "old")),
            "the older keeps its own"
        );
        index.forget("old");
        assert!(!index.older_overlaps(&claim("b", "web/x", 20, "new")));
        assert!(index.by_place.contains_key(&place("b").unwrap()));
        index.forget("new");
        assert!(index.by_place.is_empty(), "nothing left behind");
    }

    #[test]
    fn a_claim_moved_elsewhere_leaves_its_old_prefix() {
        let mut index = Index::default();
        index.record("a", claim("b", "one", 10, "a"));
        index.record("a", claim("b", "two", 30, "a"));
        assert!(!index.older_overlaps(&claim("b", "one", 20, "z")));
        assert!(index.older_overlaps(&claim("b", "two/x", 40, "z")));
    }
}
