//go:build schemagen

package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	restclient "k8s.io/client-go/rest"
	"k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
)

// runtimeBehaviour reads, from the release's code, what the kubelet does
// at start-up with what the runtime and the host tell it, and what some
// values mean in this release (kubeletcfg's schema/meanings.go is checked
// against these):
//
//   - cgroupDriverFromCRI: "gate:NAME" when run() asks the runtime's
//     RuntimeConfig only with gate NAME on, "always" when it always asks;
//     absent when it never does.
//   - configzCgroupDriver: "runtime" when /configz is registered after the
//     runtime's answer overwrote cgroupDriver, "configured" when before.
//   - reservedSystemCPUsRewrite: "true" when run() sets systemReserved's cpu
//     to the count of --reserved-cpus and drops kubeReserved's cpu, in the
//     maps /configz serves.
//   - eventRecordQPSZero: what eventRecordQPS 0 gives the event client:
//     "unlimited", or client-go's default QPS ("5").
//   - restartReadinessGate: the gate that, off, keeps containers' readiness
//     across a kubelet restart; absent when nothing does (a restart sets
//     probed containers not ready until probed again).
//   - gateRequired.FIELD: the gate without which the kubelet's validation
//     refuses FIELD set (for the fields kubeletcfg's meanings name).
func runtimeBehaviour() (map[string]string, error) {
	b := map[string]string{}
	dir := kubernetesDir()
	fset := token.NewFileSet()
	server, err := parser.ParseFile(fset, filepath.Join(dir, "cmd/kubelet/app/server.go"), nil, 0)
	if err != nil {
		return nil, err
	}
	run := findFunc(server, "run")
	if run == nil {
		return nil, fmt.Errorf("server.go: no func run")
	}
	criPos, criGate := callIn(run, "getCgroupDriverFromCRI")
	configzPos, _ := callIn(run, "initConfigz")
	switch {
	case criPos == token.NoPos:
	case criGate != "":
		b["cgroupDriverFromCRI"] = "gate:" + criGate
	default:
		b["cgroupDriverFromCRI"] = "always"
	}
	if criPos != token.NoPos && configzPos != token.NoPos {
		b["configzCgroupDriver"] = "configured"
		if configzPos > criPos {
			b["configzCgroupDriver"] = "runtime"
		}
	}
	if src := funcSource(fset, run, dir); strings.Contains(src, `delete(s.KubeReserved, "cpu")`) && strings.Contains(src, `s.SystemReserved["cpu"] = strconv.Itoa(reservedSystemCPUs.Size())`) && configzPos < posOf(run, `SystemReserved`) {
		b["reservedSystemCPUsRewrite"] = "true"
	}
	b["eventRecordQPSZero"] = fmt.Sprint(restclient.DefaultQPS)
	if zeroIsUnlimited(run) {
		b["eventRecordQPSZero"] = "unlimited"
	}
	worker, err := os.ReadFile(filepath.Join(dir, "pkg/kubelet/prober/worker.go"))
	if err != nil {
		return nil, err
	}
	if strings.Contains(string(worker), "features.ChangeContainerStatusOnKubeletRestart") {
		b["restartReadinessGate"] = "ChangeContainerStatusOnKubeletRestart"
	}
	for field, probe := range gateProbes {
		gate, err := requiredGate(probe)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", field, err)
		}
		if gate != "" {
			b["gateRequired."+field] = gate
		}
	}
	return b, nil
}

func findFunc(f *ast.File, name string) *ast.FuncDecl {
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == name {
			return fd
		}
	}
	return nil
}

// callIn finds the first call of name in fn and the feature gate of an
// enclosing `if ...Enabled(features.GATE)`, if any.
func callIn(fn *ast.FuncDecl, name string) (token.Pos, string) {
	var pos token.Pos
	var gate string
	var stack []ast.Node
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		call, ok := n.(*ast.CallExpr)
		if !ok || pos != token.NoPos {
			return true
		}
		if id, ok := call.Fun.(*ast.Ident); ok && id.Name == name {
			pos = call.Pos()
			for i := len(stack) - 1; i >= 0; i-- {
				if ifs, ok := stack[i].(*ast.IfStmt); ok {
					if g := enabledGate(ifs.Cond); g != "" {
						gate = g
						break
					}
				}
			}
		}
		return true
	})
	return pos, gate
}

// enabledGate is GATE of a condition `X.Enabled(features.GATE)`.
func enabledGate(e ast.Expr) string {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return ""
	}
	if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Enabled" {
		return ""
	}
	if arg, ok := call.Args[0].(*ast.SelectorExpr); ok {
		return arg.Sel.Name
	}
	return ""
}

func funcSource(fset *token.FileSet, fn *ast.FuncDecl, dir string) string {
	file := fset.File(fn.Pos())
	data, err := os.ReadFile(file.Name())
	if err != nil {
		return ""
	}
	return string(data[file.Offset(fn.Pos()):file.Offset(fn.End())])
}

// posOf is where the first assignment to a map index of field name is.
func posOf(fn *ast.FuncDecl, field string) token.Pos {
	var pos token.Pos
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || pos != token.NoPos {
			return true
		}
		for _, l := range as.Lhs {
			if ix, ok := l.(*ast.IndexExpr); ok {
				if sel, ok := ix.X.(*ast.SelectorExpr); ok && sel.Sel.Name == field {
					pos = as.Pos()
				}
			}
		}
		return true
	})
	return pos
}

// zeroIsUnlimited: run() turns an event client QPS of 0 into -1 (no rate
// limiter), as `if int(eventClientConfig.QPS) == 0 { eventClientConfig.QPS
// = float32(-1) }` does from 1.37.
func zeroIsUnlimited(fn *ast.FuncDecl) bool {
	found := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		ifs, ok := n.(*ast.IfStmt)
		if !ok || found {
			return true
		}
		cond, ok := ifs.Cond.(*ast.BinaryExpr)
		if !ok || cond.Op != token.EQL || !mentions(cond.X, "eventClientConfig", "QPS") {
			return true
		}
		if lit, ok := cond.Y.(*ast.BasicLit); !ok || lit.Value != "0" {
			return true
		}
		for _, st := range ifs.Body.List {
			if as, ok := st.(*ast.AssignStmt); ok && len(as.Lhs) == 1 && mentions(as.Lhs[0], "eventClientConfig", "QPS") {
				if call, ok := as.Rhs[0].(*ast.CallExpr); ok && len(call.Args) == 1 {
					if u, ok := call.Args[0].(*ast.UnaryExpr); ok && u.Op == token.SUB {
						found = true
					}
				}
			}
		}
		return true
	})
	return found
}

// mentions: e is (a conversion of) X.Sel.
func mentions(e ast.Expr, x, sel string) bool {
	if call, ok := e.(*ast.CallExpr); ok && len(call.Args) == 1 {
		e = call.Args[0]
	}
	s, ok := e.(*ast.SelectorExpr)
	if !ok || s.Sel.Name != sel {
		return false
	}
	id, ok := s.X.(*ast.Ident)
	return ok && id.Name == x
}

// gateProbes are configurations that set one field each, to ask the
// kubelet's validation whether the field needs a gate.
var gateProbes = map[string]struct {
	yaml, gate string
}{
	"crashLoopBackOff.maxContainerRestartPeriod": {"crashLoopBackOff:\n  maxContainerRestartPeriod: 1m\n", "KubeletCrashLoopBackOffMax"},
	"imagePullCredentialsVerificationPolicy":     {"imagePullCredentialsVerificationPolicy: AlwaysVerify\n", "KubeletEnsureSecretPulledImages"},
}

// requiredGate returns probe.gate when the release knows the field and its
// validation refuses the field with the gate off and accepts it with the
// gate on; "" when the release has no such field or gate.
func requiredGate(probe struct{ yaml, gate string }) (string, error) {
	known := false
	for _, g := range gates() {
		known = known || g.Name == probe.gate
	}
	if !known {
		return "", nil
	}
	f, err := os.CreateTemp("", "probe-*.yaml")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	fmt.Fprintf(f, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n%s", probe.yaml)
	f.Close()
	kc, err := loadPath(f.Name())
	if err != nil {
		return "", nil // a field this release does not decode
	}
	verdict := func(on bool) (error, bool) {
		fg := utilfeature.DefaultFeatureGate.DeepCopy()
		if err := fg.SetFromMap(map[string]bool{probe.gate: on}); err != nil {
			return nil, false // locked
		}
		return validation.ValidateKubeletConfiguration(kc, fg), true
	}
	off, okOff := verdict(false)
	on, okOn := verdict(true)
	if okOff && okOn && off != nil && strings.Contains(off.Error(), probe.gate) && (on == nil || !strings.Contains(on.Error(), probe.gate)) {
		return probe.gate, nil
	}
	return "", nil
}
