//! Whether the nodes' internal API answers the operator's and the floor's node reads
//! (`GET /state`): kwok's pods run no celld, so either a double answers for every node, as
//! celld would, or nothing does, as for an operator run from a workstation.

/// How a run's node reads are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum NodeAnswers {
    /// A double of the nodes' API answers every node's `GET /state`, each node serving its
    /// fleet's version (the operator's `--node-api-connect-to` names it).
    Answering,
    /// No node answers: without `--node-api-connect-to` the operator dials each node at its
    /// name through the peer Service (`<pod>.<peer service>.<namespace>.svc`), which does not
    /// resolve outside a cluster, so every `GET /state` fails; the floor reads them the same way.
    Unreachable,
}

impl NodeAnswers {
    /// The suffix of a run's control plane name, so the two modes' logs stay apart.
    pub fn plane_suffix(self) -> &'static str {
        match self {
            NodeAnswers::Answering => "",
            NodeAnswers::Unreachable => "-unreachable",
        }
    }

    /// How the mode reads in the report and the bench's progress lines.
    pub fn describe(self) -> &'static str {
        match self {
            NodeAnswers::Answering => "nodes answering",
            NodeAnswers::Unreachable => "nodes unreachable",
        }
    }
}
