package nodefile

import "io/fs"

// StatIn resolves node path p under dir ("" for "/") as Root.Stat does.
func StatIn(dir, p string) (string, fs.FileInfo, error) {
	r, err := OpenRoot(dir)
	if err != nil {
		return "", nil, err
	}
	defer r.Close()
	return r.Stat(p)
}

// ReadFileIn reads node path p under dir as Root.ReadFile does.
func ReadFileIn(dir, p string, k Kind) ([]byte, error) {
	r, err := OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadFile(p, k)
}

// ReadDirIn lists node directory p under dir as Root.ReadDir does.
func ReadDirIn(dir, p string) ([]string, error) {
	r, err := OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadDir(p)
}
