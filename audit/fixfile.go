package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// WriteFixed writes the config file with every fixable failure fixed
// (FixedConfig) to path, a new file: never over an existing one, and no
// partial file left on an error. It returns FixedConfig's notes.
func (r *Report) WriteFixed(path string) ([]string, error) {
	data, notes, err := r.FixedConfig()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s: the file exists; give a new name", path)
		}
		return nil, err
	}
	if _, err := out.Write(data); err != nil {
		out.Close()
		os.Remove(path)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := out.Close(); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return notes, nil
}
