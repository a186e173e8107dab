package apply

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/kubeletcfg/kubeletcfg/effective"
	"github.com/kubeletcfg/kubeletcfg/migrate"
	hostnode "github.com/kubeletcfg/kubeletcfg/node"
)

// RunMigration applies kubeletcfg migrate's result to the node whose
// kubelet setup is s: the config file (the one the kubelet's --config names,
// else configPath), and the environment files the flags live in rewritten to
// the remaining flags, in one transaction. o says how to apply; its Setup,
// ReadAs, NewFile, Extra, NewArgs and ConfigPath are set here. The flags and
// feature gates the version no longer has are listed on o.Progress.
func RunMigration(ctx context.Context, s *hostnode.Setup, configPath string, o Options) (*Outcome, error) {
	o, removed, err := planMigration(s, configPath, o)
	if err != nil {
		return nil, err
	}
	if o.Progress != nil {
		for _, r := range removed {
			fmt.Fprintf(o.Progress, "removed: %s: %s\n", r.What(), r.Reason)
		}
	}
	return Run(ctx, o)
}

// planMigration fills o with the migration of s.
func planMigration(s *hostnode.Setup, configPath string, o Options) (Options, []migrate.Removed, error) {
	if !s.FromNode {
		return o, nil, fmt.Errorf("a migration rewrites the files the kubelet's flags are written in: read the command line from the node's unit and env files, not given directly")
	}
	cur, err := effective.Compute(effective.Input{Setup: s, ReadAs: s.Version}) // as migrate reads it
	if err != nil {
		return o, nil, err
	}
	if cur.ConfigFile != "" {
		configPath = cur.ConfigFile
	}
	res, err := migrate.Run(migrate.Options{Setup: s, ConfigPath: configPath})
	if err != nil {
		return o, nil, err
	}
	doc, err := res.ConfigYAML()
	if err != nil {
		return o, nil, err
	}
	files, err := res.Rewrite(s.Args, s.Origins, s.Root)
	if err != nil {
		return o, nil, err
	}
	o.Extra = nil
	for path, content := range files {
		if s.Root != "" {
			path = filepath.Join(s.Root, path)
		}
		o.Extra = append(o.Extra, FileWrite{Path: path, Content: content})
	}
	sort.Slice(o.Extra, func(i, j int) bool { return o.Extra[i].Path < o.Extra[j].Path })
	o.Setup, o.ReadAs, o.NewFile, o.NewArgs, o.ConfigPath = s, s.Version, doc, res.CommandLine(s.Args), configPath
	return o, res.Removed, nil
}
