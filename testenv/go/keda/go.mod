module celld.dev/testenv/keda

go 1.26.0

require github.com/kedacore/keda/v2 v2.21.0
