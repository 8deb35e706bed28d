//! Changing a fleet's celld image follows celld's upgrade rules: v0.3 → v0.4 stops every old
//! node before a new one starts; v0.4.0 → v0.4.1 rolls one node at a time and waits while a node
//! reports restores; an image of unknown version takes the full stop; a downgrade below v0.4.1
//! once v0.4.1 ran is refused; any other change of the pod template waits while a node is down
//! and then rolls one node at a time; v0.6.1's CELLD_LTX_RETENTION_SECS reaches the nodes only once
//! every node runs v0.6.1, and going back to v0.6.0 waits until no node has it. The nodes' `/state` is served by the test (kwok pods have no
//! network) through the operator's connect-to address; the request is the production one.
//!
//! - `harness`: the images, a Ready fleet on the node double, image changes and the waits;
//! - `full_stop`: v0.3 → v0.4, an unknown version, a forbidden downgrade;
//! - `rolling`: v0.4.0 → v0.4.1 one node at a time, waiting for restores;
//! - `held_settings`: v0.6.1's settings held until every node runs it;
//! - `template_roll`: any other template change waits while a node is down, then rolls.

mod full_stop;
mod harness;
mod held_settings;
mod rolling;
mod template_roll;
