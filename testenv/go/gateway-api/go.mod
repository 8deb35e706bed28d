module celld.dev/testenv/gatewayapi

go 1.25.0

require sigs.k8s.io/gateway-api v1.5.1
