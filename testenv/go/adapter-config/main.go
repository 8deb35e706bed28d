// Command adapter-config reads a prometheus-adapter configuration with the adapter's own code
// (sigs.k8s.io/prometheus-adapter pkg/config and pkg/naming, what the adapter runs at start-up),
// for the tests of this repository's examples:
//
//	adapter-config NAMESPACE SELECTOR SERIES... < config.yaml
//
// It loads config.yaml from stdin as the adapter does (strictly: an unknown field fails), builds
// the namers of its rules and externalRules as the adapter does (name and filter regular
// expressions, query templates, resource overrides), and prints as JSON, for each external rule,
// its seriesQuery and, for each SERIES (a metric name Prometheus would list) its name filters
// accept, the external metric name the adapter serves and the query it sends to Prometheus when
// a HorizontalPodAutoscaler in NAMESPACE asks for it with the metric selector SELECTOR (label
// selector syntax: fleet=web). A configuration the adapter would refuse exits 1 with its error.
// The seriesQuery itself is Prometheus's to evaluate; it is printed, not matched.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	prom "sigs.k8s.io/prometheus-adapter/pkg/client"
	"sigs.k8s.io/prometheus-adapter/pkg/config"
	"sigs.k8s.io/prometheus-adapter/pkg/naming"
)

type metric struct {
	Series string `json:"series"`
	Metric string `json:"metric"`
	Query  string `json:"query"`
}

type externalRule struct {
	SeriesQuery string   `json:"seriesQuery"`
	Metrics     []metric `json:"metrics"`
}

type report struct {
	Rules         int            `json:"rules"`
	ExternalRules []externalRule `json:"externalRules"`
}

func main() {
	if len(os.Args) < 4 {
		fail("usage: adapter-config NAMESPACE SELECTOR SERIES... < config.yaml")
	}
	namespace, selectorText, series := os.Args[1], os.Args[2], os.Args[3:]
	selector, err := labels.Parse(selectorText)
	if err != nil {
		fail("the metric selector %q: %v", selectorText, err)
	}
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail("reading config.yaml from stdin: %v", err)
	}
	cfg, err := config.FromYAML(raw)
	if err != nil {
		fail("%v", err)
	}
	mapper := restMapper()
	if _, err := naming.NamersFromConfig(cfg.Rules, mapper); err != nil {
		fail("rules: %v", err)
	}
	namers, err := naming.NamersFromConfig(cfg.ExternalRules, mapper)
	if err != nil {
		fail("externalRules: %v", err)
	}
	out := report{Rules: len(cfg.Rules), ExternalRules: []externalRule{}}
	for i, namer := range namers {
		rule := externalRule{SeriesQuery: string(namer.Selector()), Metrics: []metric{}}
		candidates := make([]prom.Series, 0, len(series))
		for _, name := range series {
			candidates = append(candidates, prom.Series{Name: name})
		}
		for _, s := range namer.FilterSeries(candidates) {
			name, err := namer.MetricNameForSeries(s)
			if err != nil {
				fail("externalRules[%d]: %v", i, err)
			}
			query, err := namer.QueryForExternalSeries(s.Name, namespace, selector)
			if err != nil {
				fail("externalRules[%d]: the query for %s: %v", i, s.Name, err)
			}
			rule.Metrics = append(rule.Metrics, metric{Series: s.Name, Metric: name, Query: string(query)})
		}
		out.ExternalRules = append(out.ExternalRules, rule)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fail("writing the report: %v", err)
	}
}

// restMapper knows the core resources a rule's resources may name (namespaces, pods, nodes),
// as the adapter's discovery of the API server would.
func restMapper() apimeta.RESTMapper {
	core := schema.GroupVersion{Version: "v1"}
	m := apimeta.NewDefaultRESTMapper([]schema.GroupVersion{core})
	m.Add(core.WithKind("Namespace"), apimeta.RESTScopeRoot)
	m.Add(core.WithKind("Node"), apimeta.RESTScopeRoot)
	m.Add(core.WithKind("Pod"), apimeta.RESTScopeNamespace)
	return m
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "adapter-config: "+format+"\n", args...)
	os.Exit(1)
}
