// Command gitops-health judges a Kubernetes object the way GitOps tools do, for celld-operator's
// tests: with an Argo CD health check in Lua, run by gopher-lua (the interpreter Argo CD embeds,
// with the libraries Argo CD opens for health checks), and with kstatus (the library behind
// Flux's health checks and kapp-style waits).
//
//	gitops-health kstatus OBJECT.yaml          prints {"status":...,"message":...}
//	gitops-health lua SCRIPT.lua OBJECT.yaml   prints {"status":...,"message":...}
//	gitops-health lua-tests DIR                runs DIR/health_test.yaml (Argo CD's format:
//	                                           tests[].inputPath and tests[].healthStatus)
//	                                           against DIR/health.lua; exits 1 on a mismatch
//
// OBJECT.yaml may be "-" for standard input.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"
)

// Health is a verdict: a status and the message that goes with it.
type Health struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// The statuses an Argo CD health check may return.
var argoStatuses = map[string]bool{
	"Healthy": true, "Progressing": true, "Degraded": true,
	"Suspended": true, "Missing": true, "Unknown": true,
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gitops-health:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	switch {
	case len(args) == 2 && args[0] == "kstatus":
		obj, err := readObject(args[1])
		if err != nil {
			return err
		}
		res, err := status.Compute(obj)
		if err != nil {
			return fmt.Errorf("kstatus: %w", err)
		}
		return printJSON(Health{Status: res.Status.String(), Message: res.Message})
	case len(args) == 3 && args[0] == "lua":
		obj, err := readObject(args[2])
		if err != nil {
			return err
		}
		h, err := luaHealth(args[1], obj)
		if err != nil {
			return err
		}
		return printJSON(h)
	case len(args) == 2 && args[0] == "lua-tests":
		return luaTests(args[1])
	default:
		return fmt.Errorf("usage: gitops-health kstatus OBJECT.yaml | lua SCRIPT.lua OBJECT.yaml | lua-tests DIR")
	}
}

func printJSON(h Health) error {
	out, err := json.Marshal(h)
	if err != nil {
		return err
	}
	fmt.Println(string(out))
	return nil
}

// readObject reads a YAML or JSON object as an unstructured object (integers as int64, as the
// API machinery reads them).
func readObject(path string) (*unstructured.Unstructured, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(js); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return obj, nil
}

// luaHealth runs the health check in script with the global obj set to the object.
func luaHealth(script string, obj *unstructured.Unstructured) (Health, error) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	L.SetGlobal("obj", toLua(L, obj.Object))
	if err := L.DoFile(script); err != nil {
		return Health{}, fmt.Errorf("%s: %w", script, err)
	}
	table, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		return Health{}, fmt.Errorf("%s returned %s, not a table", script, L.Get(-1).Type())
	}
	h := Health{Status: lua.LVAsString(table.RawGetString("status")), Message: lua.LVAsString(table.RawGetString("message"))}
	if !argoStatuses[h.Status] {
		return h, fmt.Errorf("%s returned status %q, which Argo CD does not know", script, h.Status)
	}
	return h, nil
}

// toLua converts a decoded JSON value into Lua values: objects and arrays become tables.
func toLua(L *lua.LState, v interface{}) lua.LValue {
	switch v := v.(type) {
	case map[string]interface{}:
		t := L.NewTable()
		for k, x := range v {
			t.RawSetString(k, toLua(L, x))
		}
		return t
	case []interface{}:
		t := L.NewTable()
		for _, x := range v {
			t.Append(toLua(L, x))
		}
		return t
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	default:
		return lua.LNil
	}
}

// luaTests runs the cases of dir/health_test.yaml against dir/health.lua.
func luaTests(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, "health_test.yaml"))
	if err != nil {
		return err
	}
	var cases struct {
		Tests []struct {
			HealthStatus Health `json:"healthStatus"`
			InputPath    string `json:"inputPath"`
		} `json:"tests"`
	}
	if err := yaml.UnmarshalStrict(data, &cases); err != nil {
		return fmt.Errorf("health_test.yaml: %w", err)
	}
	if len(cases.Tests) == 0 {
		return fmt.Errorf("health_test.yaml lists no tests")
	}
	failed := 0
	for _, c := range cases.Tests {
		obj, err := readObject(filepath.Join(dir, c.InputPath))
		if err != nil {
			return err
		}
		got, err := luaHealth(filepath.Join(dir, "health.lua"), obj)
		if err != nil {
			return fmt.Errorf("%s: %w", c.InputPath, err)
		}
		if got != c.HealthStatus {
			failed++
			fmt.Printf("FAIL %s: got %+v, want %+v\n", c.InputPath, got, c.HealthStatus)
		} else {
			fmt.Printf("ok   %s: %s\n", c.InputPath, got.Status)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d health checks differ", failed, len(cases.Tests))
	}
	return nil
}
