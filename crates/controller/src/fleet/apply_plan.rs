//! Applies and prunes one fleet's children (and creates and deletes its deploy Jobs), each on
//! its own: a child the API server refuses or
//! cannot take is recorded as a failure and the others are still applied, so one bad object
//! never keeps the rest of the fleet, or its status, from being reconciled. The pods' path
//! comes first, unless the API server is slow to create Services: a new fleet then starts with
//! its public Service (see [`service_lead`](crate::fleet::service_lead)).

use crate::cache::caches::{self, ChildKind, OptionalKind};
use crate::children::deploy_jobs::DeployJobs;
use crate::children::{Child, Desired, MANAGER};
use crate::error::Error;
use crate::failure::Failure;
use crate::fleet::context::Context;
use crate::fleet::name_claim;
use crate::fleet::plan::Plan;
use crate::fleet::service_ports;
use crate::fleet::ssa::{self, Outcome};
use crate::locks::lock;
use celld_api::labels;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Service;
use kube::api::PostParams;
use kube::runtime::reflector::ObjectRef;
use kube::{Api, ResourceExt};
use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often a Service's ports are read and repaired when it keeps changing in between.
const REPAIR_ATTEMPTS: u32 = 3;

/// What applying a fleet's children did.
#[derive(Debug)]
pub struct Applied {
    /// The StatefulSet as applied, or as it was read when it could not be applied; None when
    /// it does not exist or could not be read.
    pub statefulset: Option<StatefulSet>,
    /// Children created or changed, as `Kind/name`.
    pub changed: Vec<String>,
    /// Children deleted, as `Kind/name`.
    pub pruned: Vec<String>,
    /// What could not be read, applied or pruned, in the order met.
    pub failures: Vec<Failure>,
    /// Whether the fleet's pods were started once its public Service existed (see
    /// [`service_lead`](crate::fleet::service_lead)): its first status then waits for them too.
    pub led: bool,
}

/// What applying one child, and pruning the others of its kind, did.
#[derive(Debug, Default)]
struct Done {
    changed: Vec<String>,
    pruned: Vec<String>,
    failures: Vec<Failure>,
    /// How long the create of a Service that did not exist took.
    created_in: Option<Duration>,
}

impl Done {
    fn fail<K: Child>(&mut self, name: &str, verb: &str, error: &Error) {
        self.failures
            .push(Failure::child(&kind::<K>(), name, verb, error));
    }
}

impl Applied {
    /// Adds what one child's apply did, after what the children before it did.
    fn add(&mut self, done: Done) {
        self.changed.extend(done.changed);
        self.pruned.extend(done.pruned);
        self.failures.extend(done.failures);
    }
}

/// Applies the children of one fleet in its namespace.
struct Children<'a> {
    ctx: &'a Context,
    ns: &'a str,
    uid: &'a str,
    selector: String,
    /// Whose the names of the children the caches do not hold are, read from the API server
    /// all at once before the first apply (see [`Children::look_up`]), by `Kind/name`.
    looked_up: Mutex<HashMap<String, Result<Option<String>, Error>>>,
}

fn kind<K: Child>() -> String {
    K::kind(&()).to_string()
}

impl Children<'_> {
    fn api<K: Child>(&self) -> Api<K> {
        Api::namespaced(self.ctx.shared.client.clone(), self.ns)
    }

    /// Times a new fleet's pods from now, when `pods` (the StatefulSet's apply) created them.
    fn started(&self, new: bool, pods: &Done) {
        if new && pods.failures.is_empty() {
            self.ctx.service_lead.pods_applied(self.uid, Instant::now());
        }
    }

    /// Records how long `public` (the public Service's apply) took to create it, if it did.
    fn timed(&self, public: &Done) {
        if let Some(took) = public.created_in {
            self.ctx
                .service_lead
                .service_created(self.uid, took, Instant::now());
        }
    }

    /// The live child `name` from the cache (from the API server for a kind the controller
    /// does not cache), or the failure to read it, or its name taken, recorded in `done`.
    async fn read<K: ChildKind>(&self, name: &str, done: &mut Done) -> Result<Option<K>, ()> {
        let live = match K::cache(&self.ctx.shared.caches.children) {
            Some(cache) => caches::child(cache, self.ns, name),
            None => match ssa::read(&self.api::<K>(), name).await {
                Ok(None) => return Ok(None),
                Ok(live) => live,
                Err(e) => {
                    done.fail::<K>(name, "read", &e);
                    return Err(());
                }
            },
        };
        self.claim(name, live, done).await
    }

    /// `live`, the child `name` as read, when the fleet controls it; with None, whether the
    /// name is free, from the API server (the caches hold only the operator's labelled
    /// objects). An object the fleet does not control is never applied over: its name taken
    /// is recorded in `done` (see [`name_claim`]).
    async fn claim<K: Child>(
        &self,
        name: &str,
        live: Option<K>,
        done: &mut Done,
    ) -> Result<Option<K>, ()> {
        let looked_up = lock(&self.looked_up).remove(&format!("{}/{name}", kind::<K>()));
        let holder = match (&live, looked_up) {
            (Some(live), _) => Ok(name_claim::foreign(live, self.uid)),
            (None, Some(found)) => found,
            (None, None) => name_claim::taken(&self.api::<K>(), name, self.uid).await,
        };
        let holder = match holder {
            Ok(holder) => holder,
            Err(e) => {
                done.fail::<K>(name, "read", &e);
                return Err(());
            }
        };
        match holder {
            None => Ok(live),
            Some(holder) => {
                done.failures
                    .push(Failure::name_taken(&kind::<K>(), name, self.ns, &holder));
                Err(())
            }
        }
    }

    /// Whose the name of `child` is, read from the API server, unless the cache holds it (or
    /// `live` is given): the lookup [`claim`](Self::claim) would make, made ahead.
    async fn lookup<K: ChildKind>(
        &self,
        child: Option<&K>,
        live: bool,
    ) -> Option<(String, Result<Option<String>, Error>)> {
        let name = child?.name_any();
        let cache = K::cache(&self.ctx.shared.caches.children)?;
        // Whether the cache holds it, without parsing it: `read` parses it once.
        let cached = cache.get(&ObjectRef::new(&name).within(self.ns)).is_some();
        if live || cached {
            return None;
        }
        let found = name_claim::taken(&self.api::<K>(), &name, self.uid).await;
        Some((format!("{}/{name}", kind::<K>()), found))
    }

    /// Looks up, all at once, the names of the children of `plan` the caches do not hold (every
    /// child of a new fleet): a new fleet's applies then wait for one round trip, not one per
    /// child.
    async fn look_up(&self, plan: &Plan, live: bool) {
        let (policy, peer, pods, public, budget, ingress) = tokio::join!(
            self.lookup(Some(&plan.network_policy), false),
            self.lookup(Some(&plan.peer_service), false),
            self.lookup(Some(&plan.statefulset), live),
            self.lookup(Some(&plan.service), false),
            self.lookup(plan.pod_disruption_budget.as_ref(), false),
            self.lookup(plan.ingress.as_ref(), false),
        );
        let mut looked_up = lock(&self.looked_up);
        for (key, found) in [policy, peer, pods, public, budget, ingress]
            .into_iter()
            .flatten()
        {
            looked_up.insert(key, found);
        }
    }

    /// Applies the StatefulSet over `live` (as the inputs read it) once the fleet's claim on
    /// its name holds; None when it does not (the object of that name is not the fleet's).
    async fn pods(
        &self,
        child: StatefulSet,
        live: Option<StatefulSet>,
        done: &mut Done,
    ) -> Option<StatefulSet> {
        let live = self.claim(&child.name_any(), live, done).await.ok()?;
        self.put(child, live, false, done).await
    }

    /// Applies `child` over `live` (unconditionally when `force`). Returns the object after
    /// the call, or the live one when the apply failed.
    async fn put<K: Child>(
        &self,
        child: K,
        live: Option<K>,
        force: bool,
        done: &mut Done,
    ) -> Option<K> {
        let name = child.name_any();
        let basis = if force { None } else { live.as_ref() };
        match ssa::apply(&self.api(), child, basis).await {
            Ok((obj, outcome)) => {
                if outcome == Outcome::Applied {
                    done.changed.push(format!("{}/{name}", kind::<K>()));
                }
                Some(obj)
            }
            Err(e) => {
                done.fail::<K>(&name, "apply", &e);
                live
            }
        }
    }

    /// Applies a child the fleet always has.
    async fn always<K: ChildKind>(&self, child: K, done: &mut Done) {
        if let Ok(live) = self.read::<K>(&child.name_any(), done).await {
            self.put(child, live, false, done).await;
        }
    }

    /// Applies a Service, first replacing live ports that clash with the wanted ones. The
    /// repair only applies to the version of the Service read: if it changed in between, the
    /// Service is read and repaired again.
    async fn service(&self, child: Service) -> Done {
        let mut done = Done::default();
        let name = child.name_any();
        let api = self.api::<Service>();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let Ok(live) = self.read::<Service>(&name, &mut done).await else {
                return done;
            };
            let repaired = match &live {
                None => false,
                Some(live) => match service_ports::repair(&api, live, &child).await {
                    Ok(repaired) => repaired,
                    Err(e) if attempts < REPAIR_ATTEMPTS && service_ports::raced(&e) => {
                        continue;
                    }
                    Err(e) => {
                        done.fail::<Service>(&name, "repair the ports of", &e);
                        return done;
                    }
                },
            };
            let (created, started) = (live.is_none(), Instant::now());
            self.put(child, live, repaired, &mut done).await;
            if created && done.failures.is_empty() {
                done.created_in = Some(started.elapsed());
            }
            return done;
        }
    }

    /// Creates the deploy Job to start, unless the cache shows it, and deletes the superseded
    /// ones. A Job is created, never applied over: its pod template cannot change, its name
    /// carries what it publishes, and the operator holds no patch on Jobs (creating one is
    /// creating a pod). One an earlier reconcile created, whose status did not land, is taken
    /// as it is. Neither is announced as a child applied or pruned: status.source and the
    /// SourceSynced condition tell of the Jobs.
    async fn deploy_jobs(&self, jobs: DeployJobs) -> Done {
        let DeployJobs { start, superseded } = jobs;
        let mut done = Done::default();
        let api = self.api::<Job>();
        let cached = |name: &str| self.ctx.shared.caches.source.job(self.ns, name).is_some();
        if let Some(job) = start.filter(|job| !cached(&job.name_any())) {
            match api.create(&PostParams::default(), &job).await {
                Ok(_) => self.ctx.shared.metrics.source_publish_started(),
                Err(kube::Error::Api(s)) if s.code == 409 => {
                    // One an earlier reconcile created, unless another's has its name.
                    let _ = self.claim::<Job>(&job.name_any(), None, &mut done).await;
                }
                Err(e) => done.fail::<Job>(
                    &job.name_any(),
                    "create",
                    &Error::kube("creating the deploy Job", e),
                ),
            }
        }
        done.failures
            .extend(ssa::delete_all(&api, superseded).await.failures);
        done
    }

    /// Applies a child the spec may ask for, and deletes the fleet's other objects of its kind.
    async fn optional<K: OptionalKind>(&self, child: Option<K>) -> Done {
        let mut done = Done::default();
        let keep: BTreeSet<String> = child.iter().map(|c| c.name_any()).collect();
        if let Some(child) = child {
            self.always(child, &mut done).await;
        }
        let api = self.api::<K>();
        let pruned = match K::owned(&self.ctx.shared.caches.children) {
            Some(owned) => {
                let unwanted = caches::owned_by(owned, self.ns, self.uid)
                    .into_iter()
                    .filter(|name| !keep.contains(name));
                ssa::delete_all(&api, unwanted).await
            }
            None => ssa::prune(&api, &self.selector, self.uid, &keep).await,
        };
        done.pruned.extend(
            pruned
                .deleted
                .into_iter()
                .map(|n| format!("{}/{n}", kind::<K>())),
        );
        done.failures.extend(pruned.failures);
        done
    }
}

/// Applies every child of `plan` for the fleet `d` (owner `uid`), whose StatefulSet is `live`
/// (as the inputs read it), and prunes what the plan no longer holds, each independently of
/// the others' success.
pub async fn apply(
    ctx: &Context,
    d: &Desired<'_>,
    plan: Plan,
    live: Option<StatefulSet>,
    uid: &str,
) -> Applied {
    let children = Children {
        ctx,
        ns: &d.namespace,
        uid,
        selector: format!(
            "{}={},app.kubernetes.io/managed-by={MANAGER}",
            labels::FLEET,
            d.name
        ),
        looked_up: Mutex::new(HashMap::new()),
    };
    children.look_up(&plan, live.is_some()).await;
    let new = live.is_none();
    let lead = if new {
        ctx.service_lead.lead(Instant::now())
    } else {
        None
    };
    let (statefulset, done) = match lead {
        None => in_order(&children, plan, live).await,
        Some(lead) => service_first(&children, plan, lead).await,
    };
    let mut applied = Applied {
        statefulset,
        changed: Vec::new(),
        pruned: Vec::new(),
        failures: Vec::new(),
        led: lead.is_some(),
    };
    for done in done {
        applied.add(done);
    }
    applied
}

/// The children one after the other, the pods' first. The pods' fence and their peers' names
/// come before the pods: the NetworkPolicy keeps the internal port (peer traffic and celld's
/// unauthenticated operator API) inside the fleet from a pod's first moment, and the peer
/// Service gives each pod the DNS name it advertises. A StatefulSet applied first would start
/// pods without either.
async fn in_order(
    children: &Children<'_>,
    plan: Plan,
    live: Option<StatefulSet>,
) -> (Option<StatefulSet>, Vec<Done>) {
    let Plan {
        statefulset,
        service,
        peer_service,
        network_policy,
        pod_disruption_budget,
        ingress,
        http_route,
        http_routes_served,
        deploy_jobs,
    } = plan;
    let mut policy = Done::default();
    children.always(network_policy, &mut policy).await;
    let peer = children.service(peer_service).await;
    let new = live.is_none();
    let mut pods = Done::default();
    let statefulset = children.pods(statefulset, live, &mut pods).await;
    children.started(new, &pods);
    let public = children.service(service).await;
    children.timed(&public);
    let budget = children.optional(pod_disruption_budget).await;
    let ingress = children.optional(ingress).await;
    // HTTPRoute exists as a kind only where the cluster serves the Gateway API.
    let route = if http_routes_served {
        children.optional(http_route).await
    } else {
        Done::default()
    };
    let jobs = children.deploy_jobs(deploy_jobs).await;
    (
        statefulset,
        vec![policy, peer, pods, public, budget, ingress, route, jobs],
    )
}

/// A new fleet's children while public Services are slow to create: the public Service, the
/// PodDisruptionBudget and the route from the start; the pod path (as [`in_order`]) once the
/// public Service exists, or after `lead` at most.
async fn service_first(
    children: &Children<'_>,
    plan: Plan,
    lead: Duration,
) -> (Option<StatefulSet>, Vec<Done>) {
    let Plan {
        statefulset,
        service,
        peer_service,
        network_policy,
        pod_disruption_budget,
        ingress,
        http_route,
        http_routes_served,
        deploy_jobs,
    } = plan;
    let (landed, landing) = tokio::sync::oneshot::channel::<()>();
    let pods = async {
        // Dropped unsent when the Service's apply ends: the pods go then too.
        let _ = tokio::time::timeout(lead, landing).await;
        let (policy, peer) = tokio::join!(
            async {
                let mut done = Done::default();
                children.always(network_policy, &mut done).await;
                done
            },
            children.service(peer_service),
        );
        let mut pods = Done::default();
        let statefulset = children.pods(statefulset, None, &mut pods).await;
        children.started(true, &pods);
        (statefulset, [policy, peer, pods])
    };
    let serving = async {
        tokio::join!(
            async {
                let done = children.service(service).await;
                children.timed(&done);
                drop(landed);
                done
            },
            children.optional(pod_disruption_budget),
            children.optional(ingress),
            async {
                // HTTPRoute exists as a kind only where the cluster serves the Gateway API.
                if http_routes_served {
                    children.optional(http_route).await
                } else {
                    Done::default()
                }
            },
        )
    };
    let ((statefulset, [policy, peer, pods]), (public, budget, ingress, route)) =
        tokio::join!(pods, serving);
    let jobs = children.deploy_jobs(deploy_jobs).await;
    (
        statefulset,
        vec![policy, peer, pods, public, budget, ingress, route, jobs],
    )
}
