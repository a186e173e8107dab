package units

import "io/fs"

// StatNode resolves node path p under root ("" is the live node), following
// symbolic links inside the root and never out of it, and returns the path it
// names and what is there (the file itself, not a link).
func StatNode(root, p string) (string, fs.FileInfo, error) {
	n, err := openNode(root)
	if err != nil {
		return "", nil, err
	}
	defer n.Close()
	return n.stat(p)
}

// ReadNodeFile reads the regular file node path p names under root, as
// StatNode resolves it, refusing files larger than units read (16 MiB).
func ReadNodeFile(root, p string) ([]byte, error) {
	n, err := openNode(root)
	if err != nil {
		return nil, err
	}
	defer n.Close()
	return n.readFile(p)
}

// ReadNodeDir returns the names in node directory p under root, sorted.
func ReadNodeDir(root, p string) ([]string, error) {
	n, err := openNode(root)
	if err != nil {
		return nil, err
	}
	defer n.Close()
	return n.readDir(p)
}
