package journal

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"mcpscope/internal/filelock"
)

// The index file: the per-frame index of a journaled session on disk, so a
// session of any length holds the same memory. It lives beside its
// journal, as <journal>.idx; when that cannot be written (a read-only
// directory), in the cache directory ($XDG_CACHE_HOME/mcpscope/index,
// named after the journal's path). When another process holds it (the
// proxy writing the journal a viewer reads, a second open), or neither
// place takes it, the session writes a private file nobody else sees,
// which goes away with the process.
//
// The file is a header and then one fixed-size record per frame (seq
// order, from the session's first seq). It is derived data: the journal
// is the truth. A session that finds an index whose header matches its
// journal (the journal's first line, size and modification time) compares
// what it computes from the journal with the records, writing nothing
// while they agree; at the first record that differs, or with any other
// header, it writes the file again from there. Memory trusts only records
// this process wrote or compared, so a stale, truncated or hostile file
// costs a rewrite, never a wrong answer.
const (
	// IndexSuffix names the index file beside a journal.
	IndexSuffix = ".idx"
	// IndexRecord is the bytes one frame costs in the index file.
	IndexRecord = 64
	// IndexHeader is the bytes of the index file's header.
	IndexHeader = 64
	indexMagic  = "MCPSIDX\x01"
	// IndexPageRecords is how many records are written and read back at
	// once (IndexPageBytes, 128 KiB).
	IndexPageRecords = 2048
	IndexPageBytes   = IndexPageRecords * IndexRecord
)

// IndexPath is where the index of the journal at path is kept first.
func IndexPath(journal string) string { return journal + IndexSuffix }

// Index is an index file a store writes (and reads back).
type Index struct {
	f       *os.File
	path    string // "" for a private, unlinked file
	journal string // the journal it indexes, stamped into the header at the end
	id      uint64 // the journal's identity: a hash of its first line
	// found is how many records the file had when opened with a header
	// matching the journal: records before it are compared, not written,
	// while they agree (checking). Past it, or once one differs, the
	// store writes.
	found    int64
	checking bool
	first    uint64 // the first seq the file's records hold (header)
	err      error  // the first write that failed: the store then keeps its index in memory
}

// OpenIndex opens (or makes) the index of the journal at path. It returns
// nil when no file at all can be had: the store then keeps its index in
// memory, as before there were index files.
func OpenIndex(journal string) *Index {
	id, jsize, jmtime, ok := journalIdentity(journal)
	if !ok {
		return nil
	}
	for _, p := range []string{IndexPath(journal), CacheIndexPath(journal)} {
		if p == "" {
			continue
		}
		f, err := openIndexFile(p)
		if err != nil && !errors.Is(err, syscall.ELOOP) && p != IndexPath(journal) && os.MkdirAll(filepath.Dir(p), 0o700) == nil {
			f, err = openIndexFile(p)
		}
		if errors.Is(err, syscall.ELOOP) {
			break // a symlink planted where the index goes: never written through, a private one
		}
		if err != nil {
			continue // a read-only directory: the cache directory's, then a private one
		}
		if st, err := f.Stat(); err != nil || !ownIndex(st) ||
			filelock.TryLock(f) != nil {
			f.Close() // not a file of its own, or another process writes it: a private one
			break
		}
		x := &Index{f: f, path: p, journal: journal, id: id}
		x.adopt(jsize, jmtime)
		return x
	}
	f, err := privateIndex()
	if err != nil {
		return nil
	}
	return &Index{f: f, journal: journal, id: id}
}

// openIndexFile opens (or makes) an index file at p without following a
// symlink there (ELOOP) and without waiting on a FIFO or device planted
// there (which ownIndex then refuses): the index is written in place, and a
// planted link would have it written over the file it points to.
func openIndexFile(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDWR|os.O_CREATE|oNoFollow|syscall.O_NONBLOCK, 0o600)
}

// ownIndex says whether st is a file an index may be written to: a regular
// file with no other name (a hard link planted there is someone's file).
func ownIndex(st os.FileInfo) bool {
	if !st.Mode().IsRegular() {
		return false
	}
	return links(st) <= 1
}

// adopt reads the header of an existing file: one matching the journal
// as it is now is checked record by record; anything else is emptied.
func (x *Index) adopt(jsize, jmtime int64) {
	var h [IndexHeader]byte
	st, err := x.f.Stat()
	if err == nil && st.Size() >= IndexHeader && (st.Size()-IndexHeader)%IndexRecord == 0 {
		if _, err = x.f.ReadAt(h[:], 0); err == nil && x.headerMatches(h[:], jsize, jmtime) {
			n := int64(binary.LittleEndian.Uint64(h[48:]))
			if n == (st.Size()-IndexHeader)/IndexRecord {
				x.found, x.checking, x.first = n, true, binary.LittleEndian.Uint64(h[40:])
				return
			}
		}
	}
	x.Reset()
}

func (x *Index) headerMatches(h []byte, jsize, jmtime int64) bool {
	return string(h[:8]) == indexMagic && binary.LittleEndian.Uint32(h[8:]) == IndexRecord &&
		binary.LittleEndian.Uint64(h[16:]) == x.id && int64(binary.LittleEndian.Uint64(h[24:])) == jsize &&
		int64(binary.LittleEndian.Uint64(h[32:])) == jmtime && binary.LittleEndian.Uint64(h[56:]) == sum64(h[:56])
}

// Reset empties the file and writes a header that matches no journal, so
// a process that dies before the end leaves a file the next one rewrites.
func (x *Index) Reset() {
	x.found, x.checking = 0, false
	if err := x.f.Truncate(0); err != nil {
		x.fail(err)
		return
	}
	var h [IndexHeader]byte
	copy(h[:], indexMagic)
	binary.LittleEndian.PutUint32(h[8:], IndexRecord)
	x.write(h[:], 0)
}

// Stamp writes the header that says the file holds n records for the
// journal as it is now, and cuts what follows them.
func (x *Index) Stamp(first uint64, n int64) {
	if x.err != nil {
		return
	}
	if err := x.f.Truncate(IndexHeader + n*IndexRecord); err != nil {
		x.fail(err)
		return
	}
	_, jsize, jmtime, ok := journalIdentity(x.journal)
	if !ok {
		return
	}
	var h [IndexHeader]byte
	copy(h[:], indexMagic)
	binary.LittleEndian.PutUint32(h[8:], IndexRecord)
	binary.LittleEndian.PutUint32(h[12:], IndexPageRecords)
	binary.LittleEndian.PutUint64(h[16:], x.id)
	binary.LittleEndian.PutUint64(h[24:], uint64(jsize))
	binary.LittleEndian.PutUint64(h[32:], uint64(jmtime))
	binary.LittleEndian.PutUint64(h[40:], first)
	binary.LittleEndian.PutUint64(h[48:], uint64(n))
	binary.LittleEndian.PutUint64(h[56:], sum64(h[:56]))
	x.write(h[:], 0)
}

// unstamp marks the file as not matching the journal any more (frames are
// being added): it is the header a crash leaves behind.
func (x *Index) unstamp() {
	var z [8]byte
	x.write(z[:], 56)
}

// PutPage stores page k (its records, whole or the last part) at its place:
// compared while the file agrees, written otherwise.
func (x *Index) PutPage(k int, page []byte) {
	if x.err != nil {
		return
	}
	off := IndexHeader + int64(k)*IndexPageBytes
	if x.checking {
		recs := int64(len(page) / IndexRecord)
		if int64(k)*IndexPageRecords+recs <= x.found {
			old := make([]byte, len(page))
			if _, err := x.f.ReadAt(old, off); err == nil && bytes.Equal(old, page) {
				return
			}
		}
		x.checking = false
		x.unstamp()
	}
	x.write(page, off)
}

func (x *Index) write(p []byte, off int64) {
	if x.err != nil {
		return
	}
	if _, err := x.f.WriteAt(p, off); err != nil {
		x.fail(err)
	}
}

func (x *Index) fail(err error) {
	if x.err == nil {
		x.err = err
	}
}

// ReadPage reads page k back into p (which is sized for the records wanted).
func (x *Index) ReadPage(k int, p []byte) error {
	_, err := x.f.ReadAt(p, IndexHeader+int64(k)*IndexPageBytes)
	return err
}

// Checking reports whether the store is still comparing its records
// with the ones the file had, writing nothing while they agree.
func (x *Index) Checking() bool { return x.checking }

// First is the first seq the file's records hold.
func (x *Index) First() uint64 { return x.first }

// Err is the first write that failed: the store then keeps its index in
// memory.
func (x *Index) Err() error { return x.err }

// Path is where the file is, "" for a private, unlinked one.
func (x *Index) Path() string { return x.path }

// Close closes the file.
func (x *Index) Close() {
	x.f.Close()
}

// journalIdentity is what an index header says about its journal: a hash
// of its first line (the header, with the session's start time and pid),
// its size and its modification time.
func journalIdentity(path string) (id uint64, size, mtime int64, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return 0, 0, 0, false
	}
	buf := make([]byte, 4096)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, 0, 0, false
	}
	buf = buf[:n]
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		buf = buf[:i]
	}
	return sum64(buf), st.Size(), st.ModTime().UnixNano(), true
}

func sum64(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// IndexCacheDir is where indexes of journals whose own directory cannot
// take one are kept.
func IndexCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "mcpscope", "index")
}

// CacheIndexPath names the cache directory's index of a journal, after
// its absolute path.
func CacheIndexPath(journal string) string {
	d := IndexCacheDir()
	if d == "" {
		return ""
	}
	abs, err := filepath.Abs(journal)
	if err != nil {
		return ""
	}
	h := sha256.Sum256([]byte(abs))
	return filepath.Join(d, hex.EncodeToString(h[:12])+IndexSuffix)
}

// privateIndex is an unlinked file: this process's alone, gone with it.
func privateIndex() (*os.File, error) {
	dirs := []string{IndexCacheDir(), os.TempDir()}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		_ = os.MkdirAll(d, 0o700)
		f, err := os.CreateTemp(d, "private-*"+IndexSuffix)
		if err != nil {
			continue
		}
		os.Remove(f.Name())
		return f, nil
	}
	return nil, fmt.Errorf("no directory takes a private index file")
}

// RemoveIndex deletes the index files of the journal at path (beside it
// and in the cache directory): what removes a journal removes them too.
func RemoveIndex(journal string) error {
	var first error
	for _, p := range []string{IndexPath(journal), CacheIndexPath(journal)} {
		if p == "" {
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = err
		}
	}
	return first
}

// IndexSize is the bytes the index files of the journal at path take.
func IndexSize(journal string) int64 {
	var n int64
	for _, p := range []string{IndexPath(journal), CacheIndexPath(journal)} {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}
