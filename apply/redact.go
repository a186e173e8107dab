package apply

import (
	"bytes"
	"regexp"

	yamlv3 "go.yaml.in/yaml/v3"
)

// redacted stands for a secret value in what apply prints.
const redacted = "(redacted)"

// manifestURLHeader is the flag whose values are HTTP headers (tokens) the
// kubelet sends to its static pod URL.
var manifestURLHeader = regexp.MustCompile(`(--manifest-url-header[= ]["']?)([^"'\s]+)`)

// redactText is a file's text as it may be printed: the values of
// staticPodURLHeader in a config file and of --manifest-url-header in a
// flag file replaced by redacted, header names kept.
func redactText(text []byte) string {
	if bytes.Contains(text, []byte("--manifest-url-header")) {
		text = manifestURLHeader.ReplaceAllFunc(text, func(m []byte) []byte {
			sub := manifestURLHeader.FindSubmatch(m)
			name, _, _ := bytes.Cut(sub[2], []byte(":"))
			return append(append(append([]byte{}, sub[1]...), name...), ":"+redacted...)
		})
	}
	if !bytes.Contains(text, []byte("staticPodURLHeader")) {
		return string(text)
	}
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(text, &doc); err != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yamlv3.MappingNode {
		return redacted // a file that names it and does not read: nothing shown
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "staticPodURLHeader" {
			redactValues(m.Content[i+1])
		}
	}
	out, err := yamlv3.Marshal(&doc)
	if err != nil {
		return redacted
	}
	return string(out)
}

// redactValues replaces every scalar under n but mapping keys.
func redactValues(n *yamlv3.Node) {
	switch n.Kind {
	case yamlv3.ScalarNode:
		n.Value, n.Tag, n.Style = redacted, "!!str", 0
	case yamlv3.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			redactValues(n.Content[i])
		}
	case yamlv3.SequenceNode:
		for _, c := range n.Content {
			redactValues(c)
		}
	case yamlv3.AliasNode:
		n.Kind, n.Value, n.Tag, n.Alias = yamlv3.ScalarNode, redacted, "!!str", nil
	}
}
