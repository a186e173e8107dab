package criruntime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kubeletcfg/kubeletcfg/nodefile"
)

// Modes of Ask: how the runtime's answer is read.
const (
	// Auto asks the live socket on a live node, and reads containerd's
	// configuration under --root, or when no runtime listens on the socket.
	Auto = "auto"
	// Socket asks the live socket only; Config reads containerd's
	// configuration only; None reads nothing (the kubelet's configuration
	// alone, as kubeletcfg did before it knew runtimes).
	Socket = "socket"
	Config = "config"
	None   = "none"
)

// AskOptions say how to read the runtime's answer.
type AskOptions struct {
	Mode string // Auto when empty
	// ContainerdConfig is containerd's --config (ContainerdConfigPath when
	// empty).
	ContainerdConfig string
	Timeout          time.Duration // of a live query (5 s when zero)
}

// Asker returns, for a kubelet's containerRuntimeEndpoint, what its runtime
// answers the kubelet; (nil, nil) when it is not to be read (None).
type Asker func(endpoint string) (*Answer, error)

// Ask makes an Asker for the node under rootDir ("" for the live node).
// Answers are read once per endpoint.
func Ask(rootDir string, o AskOptions) (Asker, error) {
	if o.Mode == "" {
		o.Mode = Auto
	}
	switch o.Mode {
	case Auto, Config, None:
	case Socket:
		if rootDir != "" {
			return nil, errors.New("--runtime socket asks the live node's runtime: not with --root (an image has no running runtime)")
		}
	default:
		return nil, fmt.Errorf("--runtime %q: auto, socket, config or none", o.Mode)
	}
	var mu sync.Mutex
	type result struct {
		a   *Answer
		err error
	}
	cache := map[string]result{}
	return func(endpoint string) (*Answer, error) {
		mu.Lock()
		defer mu.Unlock()
		if r, ok := cache[endpoint]; ok {
			return r.a, r.err
		}
		a, err := ask(rootDir, endpoint, o)
		cache[endpoint] = result{a, err}
		return a, err
	}, nil
}

func ask(rootDir, endpoint string, o AskOptions) (*Answer, error) {
	if o.Mode == None {
		return nil, nil
	}
	live := rootDir == ""
	var queryErr error
	if live && (o.Mode == Auto || o.Mode == Socket) {
		a, err := Query(context.Background(), endpoint, QueryOptions{Timeout: o.Timeout})
		if err == nil && a.Unsupported {
			// What such a runtime runs is in its configuration.
			if c, cerr := fromConfig(rootDir, endpoint, o); cerr == nil {
				a.FromConfig = c
			}
		}
		if err == nil || o.Mode == Socket {
			return a, err
		}
		if !noListener(err) {
			// A runtime that answers wrongly is not second-guessed.
			return nil, err
		}
		queryErr = err
	}
	a, err := fromConfig(rootDir, endpoint, o)
	if err != nil {
		if queryErr != nil && errors.Is(err, errNotContainerd) {
			return nil, queryErr
		}
		return nil, err
	}
	if queryErr != nil {
		a.Notes = append([]string{fmt.Sprintf("no runtime answers on %s (%v): read from containerd's configuration, as it will answer once started", endpoint, queryErr)}, a.Notes...)
	}
	return a, nil
}

var errNotContainerd = errors.New("not containerd")

// fromConfig reads the answer from containerd's configuration.
func fromConfig(rootDir, endpoint string, o AskOptions) (*Answer, error) {
	sock, err := SocketPath(endpoint)
	if err != nil {
		return nil, err
	}
	if o.ContainerdConfig == "" && !strings.Contains(sock, "containerd") {
		return nil, fmt.Errorf("the runtime at %s is %w: kubeletcfg reads only containerd's configuration (on the live node it asks the socket)", endpoint, errNotContainerd)
	}
	root, err := nodefile.OpenRoot(rootDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	host := Host{}
	if rootDir == "" {
		host = LiveHost()
	}
	return Containerd(root, ContainerdOptions{Path: o.ContainerdConfig, Host: host})
}

// noListener: nothing listens on the socket (not there, refused).
func noListener(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}

// LiveHost reads this machine's facts containerd's answer depends on.
func LiveHost() Host {
	var h Host
	if fi, err := os.Lstat("/run/systemd/system"); err == nil {
		running := fi.IsDir()
		h.SystemdRunning = &running
	} else if errors.Is(err, fs.ErrNotExist) {
		no := false
		h.SystemdRunning = &no
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs("/sys/fs/cgroup", &st); err == nil {
		v2 := st.Type == 0x63677270 // CGROUP2_SUPER_MAGIC
		h.CgroupV2 = &v2
	}
	return h
}
