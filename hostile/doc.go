// Package hostile holds no code: its tests run the kubeletcfg binary on
// hostile input (devices, FIFOs, huge and pathological files, paths and links
// that lead out of --root) and check that it answers in bounded time and
// memory, names what is wrong, and neither reads nor writes outside the root.
package hostile
