package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"k8s.io/kubelet/config/v1beta1"

	"github.com/kubeletcfg/kubeletcfg/audit"
	"github.com/kubeletcfg/kubeletcfg/config"
	"github.com/kubeletcfg/kubeletcfg/diff"
	"github.com/kubeletcfg/kubeletcfg/kubeadm"
	"github.com/kubeletcfg/kubeletcfg/kubeletapi"
	hostnode "github.com/kubeletcfg/kubeletcfg/node"
	"github.com/kubeletcfg/kubeletcfg/preflight"
	"github.com/kubeletcfg/kubeletcfg/schema"
	"github.com/kubeletcfg/kubeletcfg/why"
)

// Options describe one change of a node's kubelet setup: the --config file
// (NewFile), drop-ins created, replaced or removed (Dropin, MoreDropins,
// RemoveDropins), or a migration (NewArgs, Extra); and how to apply it.
type Options struct {
	Node string // must name this node
	// Setup is how the kubelet is started today (its --config names the
	// file); ReadAs, when set, reads it as that kubelet version (a
	// migration: the flags and gates it no longer has left out).
	Setup   *hostnode.Setup
	ReadAs  *schema.Version
	NewFile []byte // the new content of the --config file
	// NewFileName is the file NewFile was read from, named in its errors
	// (default: the --config file).
	NewFileName string
	// Patch, instead of NewFile, is an RFC 7386 merge patch onto the node's
	// current --config file (configpatch): the fields it names set, a null
	// removing one, the rest of the file kept. PatchName names it in errors.
	Patch     []byte
	PatchName string
	// Dropin, when set, names a drop-in of the kubelet's --config-dir that
	// NewFile becomes (created or replaced) instead of the --config file.
	Dropin string
	// MoreDropins are further drop-ins (Path: the file name) written with it.
	MoreDropins []FileWrite
	// DropinConfig, with Dropin, is the --config file's new content, written
	// with the drop-in (kubeadm's own file under kubeletcfg's drop-in).
	DropinConfig []byte
	// RemoveDropins are drop-ins of the --config-dir (file names) the change
	// removes: alone, or with Dropin. One that is not there is no change.
	RemoveDropins []string
	// Extra are more files written in the same transaction (the flag files
	// a migration rewrites).
	Extra []FileWrite
	// Restore, when set, is a backup record put back (RestoreRecord): each
	// file it kept gets its old content and each file its apply created
	// goes, in one transaction, layered as such (the --config file, the
	// drop-ins); NewArgs is then the command line the record kept.
	Restore []RestoreFile
	// NewArgs, when set, is the kubelet's command line after the change (a
	// migration moves flags into the file), and ConfigPath the --config file
	// it names when the current command line names none.
	NewArgs    []string
	ConfigPath string
	DryRun     bool
	Drained    bool   // the operator confirms the node is drained (for changes that need it)
	Restart    string // shell command that restarts the kubelet
	// PIDFile holds the restarted kubelet's process ID (required with
	// Restart): the new process is pinned, and one that exits is seen at once.
	PIDFile string
	// Unit is the systemd unit restarted over D-Bus when Restart is empty
	// (default kubelet.service).
	Unit string
	// KubeletLog is the kubelet's log file, read for the cause of a failure
	// with Restart (under systemd its journal is read).
	KubeletLog string
	// KeepBackups is how many backup records to keep (0: all); pruning
	// removes only kubeletcfg's own records and the dated copies they made.
	KeepBackups int
	// Configz, when set, reads the restarted kubelet's /configz: once it is
	// stable it must serve the intended configuration.
	Configz func(ctx context.Context) ([]byte, error)
	// Statusz, when set, reads the kubelet's /statusz before the change and
	// once the restarted one is stable: its start time must have moved and
	// be the pinned process's (to the second), else the change is rolled
	// back. A kubelet that does not serve it leaves the proof to the
	// process (Outcome.Statusz says so).
	Statusz func(ctx context.Context) (*kubeletapi.Status, error)
	// Timeout is how long the restarted kubelet has to become healthy;
	// StableFor how long it must then stay so, counted on top of Timeout.
	Timeout   time.Duration
	StableFor time.Duration
	Progress  io.Writer // live progress lines; nil for none
	// StateDir is kubeletcfg's own directory (default DefaultStateDir,
	// inside Setup.Root when set): the lock, the journal, the backups.
	StateDir string
	// StartGuard starts, outside this process, a guard that finishes the
	// apply with this ID recorded in stateDir if this process dies before
	// it confirms (Guard).
	StartGuard func(stateDir, id string) error
	// Restarter restarts and watches the kubelet (default: Restart with
	// PIDFile, else the systemd Unit).
	Restarter Restarter
	Clock     Clock // default: the real one
	// Checks are health checks beyond the kubelet's own (Node, Lease),
	// required of the new configuration and of a rollback.
	Checks []Check
	// Hooks are phases the caller adds, each before a built-in phase that
	// takes one (HookPoints): the cluster's drain before the backup.
	Hooks []Hook

	// KubeletAPI, when set, is a client with credentials for the kubelet's
	// authenticated API (port cfg.Port): its /healthz, which includes the
	// sync loop, judges the kubelet. Without it, or when the kubelet refuses
	// the credentials, the healthz port does: a ping that answers as soon
	// as the HTTP server runs.
	KubeletAPI *http.Client

	// AllowInsecure applies a change that makes a CIS kubelet check fail
	// that passes now (audit.Breaks); without it such a change is refused.
	AllowInsecure bool

	// started says when a process started (default: /proc), for /statusz.
	started func(pid int) time.Time

	// SkipPreflight applies a change preflight says the kubelet will
	// refuse on this host (the watch and the rollback still guard it).
	SkipPreflight bool
	// preflightHost is the host preflight checks (default: the live
	// host, or the image at the setup's root).
	preflightHost preflight.Host
	// Kubeadm, on a node kubeadm set up, checks a change of kubeadm's
	// config.yaml against what the next kubeadm upgrade node writes.
	Kubeadm *KubeadmCheck

	// probe reads the kubelet's health (default: its healthz).
	probe func(ctx context.Context, cfg *v1beta1.KubeletConfiguration) (ok bool, where string)
}

// Outcome is what an apply did.
type Outcome struct {
	ID         string        `json:"id,omitempty"`
	Changes    []diff.Change `json:"changes"`
	ConfigFile string        `json:"configFile"`
	Backup     string        `json:"backup,omitempty"`
	// BackupN is the record of the old files in the state directory
	// (kubeletcfg backups, rollback --to N).
	BackupN    int  `json:"backupN,omitempty"`
	Applied    bool `json:"applied"`
	RolledBack bool `json:"rolledBack"`
	// Interrupted says the apply was stopped (SIGINT, SIGTERM) before it
	// confirmed: nothing was written, or what was is rolled back.
	Interrupted bool `json:"interrupted,omitempty"`
	// LeftCordoned says the node stays cordoned after the apply, why, and
	// the command that lifts the cordon once it is right to; "" when the
	// apply left the node schedulable (or never cordoned it).
	LeftCordoned string `json:"leftCordoned,omitempty"`
	// Cause says why the change was rolled back, in one line: what the
	// watch saw and, when the kubelet said why, the explanation's summary
	// (the class, the field or flag with its value and origin, the fix).
	Cause string `json:"cause,omitempty"`
	// Explanation is why the restarted kubelet failed, in the shape of
	// kubeletcfg why -o json (why.Cause: class, field or flag, value,
	// origin, fix, the kubelet's words), when it was read.
	Explanation *why.Explanation `json:"explanation,omitempty"`
	// HealthyAfter is the time from the restart to the healthy answer
	// (stability window excluded).
	HealthyAfter time.Duration `json:"healthyAfterNs,omitempty"`
	// Kubelet is the process confirmed (or the last one seen).
	Kubelet *Proc         `json:"kubelet,omitempty"`
	Checks  []CheckResult `json:"checks,omitempty"`
	// Statusz is what the kubelet's /statusz says of the restart.
	Statusz *StatuszProof `json:"statusz,omitempty"`
	// KubeletVersion is the kubelet minor the change was judged for.
	KubeletVersion string `json:"kubeletVersion"`
	// Before and After are the effective configuration the kubelet runs
	// now and would run with the change (v1beta1 JSON of that version),
	// secrets redacted: set by FillConfigs.
	Before json.RawMessage `json:"before,omitempty"`
	After  json.RawMessage `json:"after,omitempty"`
	// configs are Before and After, still to be written.
	configs *outcomeConfigs
	// Writes are the files the change writes (or, in a dry run, would):
	// none when the change is semantically empty.
	Writes []string `json:"writes"`
	// Removes are the drop-ins the change removes (or, in a dry run, would).
	Removes []string `json:"removes,omitempty"`
	// Breaks are the CIS kubelet checks that pass now and fail after the
	// change.
	Breaks []audit.Result `json:"breaks,omitempty"`
	// Masked are the fields the new --config file changes that the kubelet
	// does not run, because a flag or a drop-in sets them: the file is
	// written, the effective configuration stays.
	Masked []Masked `json:"masked,omitempty"`
	// Files are the text of each file the change writes, before (empty for
	// a new file) and after, when the effective configuration does not tell
	// the change: a migration's flag files, a change only the file sees.
	// Secret values are redacted.
	Files []FileText `json:"files,omitempty"`
	// Preflight is preflight's verdict on the new configuration on this
	// host (kubeletcfg preflight's shape).
	Preflight *preflight.Result `json:"preflight,omitempty"`
	// Kubeadm says what the next kubeadm upgrade node does with the change,
	// and where it was persisted.
	Kubeadm *kubeadm.ChangeResult `json:"kubeadm,omitempty"`
}

// Masked is a field of the new --config file whose value the kubelet does
// not run: File is the file's new value, Runs the value the kubelet runs
// and From where it comes from (a flag, a drop-in).
type Masked struct {
	Path string `json:"path"`
	File any    `json:"file"`
	Runs any    `json:"runs"`
	From string `json:"from"`
}

// FileText is a file's text before and after a change.
type FileText struct {
	Path   string `json:"path"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// ErrRolledBack: the new configuration failed and the old one is back.
var ErrRolledBack = errors.New("the new configuration failed; the old one was restored")

// ErrInterrupted: the apply's context ended (SIGINT, SIGTERM) before the
// change was confirmed; what it had done is undone (Outcome.Interrupted).
var ErrInterrupted = errors.New("interrupted")

// ErrPending: an earlier apply was interrupted and not recovered.
var ErrPending = errors.New("an earlier apply was interrupted and is not recovered")

func (o *Options) defaults() error {
	if o.Setup == nil || o.Setup.Version == nil {
		return fmt.Errorf("apply: no kubelet setup")
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	if o.started == nil {
		o.started = processStarted
	}
	if o.probe == nil {
		o.probe = (&healthProbe{api: o.KubeletAPI, progress: o.progress}).probe
	}
	if o.StateDir == "" {
		o.StateDir = StateDirOf(o.Setup.Root, "")
	}
	if o.Restarter == nil && !o.DryRun {
		if err := o.restartSpec().Check(o.Setup.Root); err != nil {
			return err
		}
	}
	return nil
}

func unitOr(u string) string {
	if u == "" {
		return "kubelet.service"
	}
	return u
}

func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "apply: "+format+"\n", args...)
	}
}

// RestoreFile is a file (disk path) of a record put back: its old
// content, or Remove when the recorded apply created it.
type RestoreFile struct {
	Path    string
	Content []byte
	Remove  bool
}

// FileWrite is a file (disk path) and its new content.
type FileWrite struct {
	Path    string
	Content []byte
}

// DefaultStableFor is how long a restarted kubelet must stay healthy (the
// same process, healthz answering) after it first answered.
const DefaultStableFor = 10 * time.Second

type outcomeConfigs struct {
	before, after *v1beta1.KubeletConfiguration
	v             *schema.Version
}

// FillConfigs sets Before and After (for -o json: a text run does not pay
// for them).
func (o *Outcome) FillConfigs() error {
	c := o.configs
	if c == nil || o.Before != nil || o.After != nil {
		return nil
	}
	var err error
	if o.Before, err = config.RedactedJSON(c.before, c.v); err != nil {
		return err
	}
	o.After, err = config.RedactedJSON(c.after, c.v)
	return err
}
