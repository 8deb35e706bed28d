//! HTTPRoute `<fleet>` (when spec.ingress.gatewayRefs is set): parentRefs, hostname, a
//! PathPrefix or Exact match and, for stripPrefix, a URLRewrite ReplacePrefixMatch filter.

use super::{Desired, SERVICE_PORT};
use celld_api::PathType;
use gateway_api::httproutes::{
    HttpRoute, HttpRouteParentRefs, HttpRouteRules, HttpRouteRulesBackendRefs,
    HttpRouteRulesFilters, HttpRouteRulesFiltersType, HttpRouteRulesFiltersUrlRewrite,
    HttpRouteRulesFiltersUrlRewritePath, HttpRouteRulesFiltersUrlRewritePathType,
    HttpRouteRulesMatches, HttpRouteRulesMatchesPath, HttpRouteRulesMatchesPathType, HttpRouteSpec,
};

/// The HTTPRoute of a fleet, when its spec asks for one.
pub fn build(d: &Desired) -> Option<HttpRoute> {
    let ingress = d.fleet.spec.ingress.as_ref()?;
    if ingress.gateway_refs.is_empty() {
        return None;
    }
    let parent_refs = ingress
        .gateway_refs
        .iter()
        .map(|g| HttpRouteParentRefs {
            name: g.name.clone(),
            namespace: g.namespace.clone(),
            section_name: g.section_name.clone(),
            ..HttpRouteParentRefs::default()
        })
        .collect();
    let match_type = match ingress.path_type {
        PathType::Exact => HttpRouteRulesMatchesPathType::Exact,
        PathType::Prefix | PathType::ImplementationSpecific => {
            HttpRouteRulesMatchesPathType::PathPrefix
        }
    };
    let filters = ingress.strip_prefix.then(|| {
        vec![HttpRouteRulesFilters {
            r#type: HttpRouteRulesFiltersType::UrlRewrite,
            url_rewrite: Some(HttpRouteRulesFiltersUrlRewrite {
                path: Some(HttpRouteRulesFiltersUrlRewritePath {
                    r#type: HttpRouteRulesFiltersUrlRewritePathType::ReplacePrefixMatch,
                    replace_prefix_match: Some("/".into()),
                    ..HttpRouteRulesFiltersUrlRewritePath::default()
                }),
                ..HttpRouteRulesFiltersUrlRewrite::default()
            }),
            ..HttpRouteRulesFilters::default()
        }]
    });
    let mut route = HttpRoute::new(
        &d.name,
        HttpRouteSpec {
            parent_refs: Some(parent_refs),
            hostnames: Some(vec![ingress.hostname.clone()]),
            rules: Some(vec![HttpRouteRules {
                matches: Some(vec![HttpRouteRulesMatches {
                    path: Some(HttpRouteRulesMatchesPath {
                        r#type: Some(match_type),
                        value: Some(ingress.path.clone()),
                    }),
                    ..HttpRouteRulesMatches::default()
                }]),
                filters,
                backend_refs: Some(vec![HttpRouteRulesBackendRefs {
                    name: d.name.clone(),
                    port: Some(SERVICE_PORT),
                    ..HttpRouteRulesBackendRefs::default()
                }]),
                ..HttpRouteRules::default()
            }]),
        },
    );
    route.metadata = d.meta(d.name.clone(), Some(ingress.annotations.clone()));
    Some(route)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::children::fixtures;

    #[test]
    fn subpath_with_rewrite_and_two_gateways() {
        let fleet = fixtures::fleet(fixtures::GATEWAY);
        insta::assert_yaml_snapshot!(build(&fixtures::desired(&fleet)));
    }

    #[test]
    fn none_for_an_ingress_class() {
        let fleet = fixtures::fleet(fixtures::FULL);
        assert!(build(&fixtures::desired(&fleet)).is_none());
    }
}
