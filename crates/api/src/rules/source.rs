//! The rules a Worker source's fields share, on a fleet, a preview and a rollout alike.

use kube::core::Rule;

/// spec.source.path: a relative directory inside the source.
pub fn path_rule() -> Rule {
    Rule::new("self.matches('^[A-Za-z0-9._/-]+$') && !self.startsWith('/') && !self.matches('(^|/)[.][.](/|$)')").message("spec.source.path must be a relative directory inside the source (letters, digits, '.', '_', '-' and '/', not starting with '/', no '..'), for example ./ or workers/web")
}

/// spec.source.deployerImage: an image reference without spaces.
pub fn deployer_image_rule() -> Rule {
    Rule::new("self.matches('^[^\\\\s]+$')")
        .message("spec.source.deployerImage must be an image reference without spaces")
}
