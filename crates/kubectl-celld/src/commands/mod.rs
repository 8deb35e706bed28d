//! One module per subcommand: its flags and its steps, built on the bucket, the deploy pod, the
//! cluster and the text below. A command uses no other command, but `preview create`, which
//! runs `deploy` for the preview's fleet.

pub mod completion;
pub mod deploy;
pub mod history;
pub mod init;
pub mod logs;
pub mod preview;
pub mod rollback;
pub mod rollout;
pub mod status;
pub mod top;
