//! Whether an HTTPRoute's parents terminate TLS, so status.url claims https only when it is
//! really configured.

use celld_api::GatewayRef;
use gateway_api::gateways::Gateway;
use kube::{Api, Client};

/// True when every listener the route attaches to (all listeners of each Gateway, or the one
/// its sectionName names) speaks HTTPS. Unreadable Gateways count as not HTTPS.
pub async fn all_listeners_https(client: &Client, fleet_ns: &str, refs: &[GatewayRef]) -> bool {
    let mut any = false;
    for r in refs {
        let ns = r.namespace.as_deref().unwrap_or(fleet_ns);
        let Ok(gateway) = Api::<Gateway>::namespaced(client.clone(), ns)
            .get(&r.name)
            .await
        else {
            return false;
        };
        for listener in gateway
            .spec
            .listeners
            .iter()
            .filter(|l| r.section_name.as_ref().is_none_or(|s| *s == l.name))
        {
            if listener.protocol != "HTTPS" {
                return false;
            }
            any = true;
        }
    }
    any
}
