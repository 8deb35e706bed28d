//! One module per subcommand: its flags and its steps, built on the bucket, the deploy pod, the
//! cluster and the text below. A command uses no other command.

pub mod completion;
pub mod deploy;
pub mod history;
pub mod init;
pub mod logs;
pub mod rollback;
pub mod status;
pub mod top;
