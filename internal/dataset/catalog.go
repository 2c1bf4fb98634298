package dataset

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Entry describes a catalogue entry for the page.
type Entry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Rows        int    `json:"rows"`
	Inputs      int    `json:"inputs"`
	Outputs     int    `json:"outputs"`
}

// Catalog holds the data sets a client may choose by name. Clients never
// name files: the server operator loads data sets at start-up.
type Catalog struct {
	mu    sync.RWMutex // private sets come and go while sessions read
	names []string
	sets  map[string]*Dataset
	specs map[string]string // spec → name
	// private are the data sets of uploaded models (the server's uploads): reachable
	// by their unguessable names from the session that owns them, listed
	// to no one else.
	private map[string]*Dataset
}

// NewCatalog loads each spec (see Load) and checks it against the row
// limit maxRows. The built-in "step" is always present.
func NewCatalog(specs []string, maxRows int) (*Catalog, error) {
	c := &Catalog{sets: map[string]*Dataset{}, specs: map[string]string{"step": "step", "": "step"}, private: map[string]*Dataset{}}
	if err := c.Add(Step(), maxRows); err != nil {
		return nil, err
	}
	for _, s := range specs {
		if strings.TrimSpace(s) == "step" || strings.TrimSpace(s) == "" {
			continue
		}
		ds, err := Load(s)
		if err != nil {
			return nil, fmt.Errorf("data set %q: %w", s, err)
		}
		if err := c.Add(ds, maxRows); err != nil {
			return nil, err
		}
		c.specs[s] = ds.Name
	}
	return c, nil
}

// Add adds a data set under its name, replacing one of the same name,
// after checking it against the row limit maxRows.
func (c *Catalog) Add(ds *Dataset, maxRows int) error {
	n, _ := ds.X.Dims()
	if n > maxRows {
		return fmt.Errorf("data set %q has %d training rows, more than the limit of %d rows (%s raises it)", ds.Name, n, maxRows, RowsFlag)
	}
	if err := TooFewRows(n); err != nil {
		return fmt.Errorf("data set %q: %w", ds.Name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.sets[ds.Name]; !ok {
		c.names = append(c.names, ds.Name)
	}
	c.sets[ds.Name] = ds
	return nil
}

// AddPrivate adds an uploaded model's data set under its (unique) name.
func (c *Catalog) AddPrivate(ds *Dataset) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.private[ds.Name] = ds
}

// RemovePrivate forgets a private data set.
func (c *Catalog) RemovePrivate(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.private, name)
}

// NameOf returns the name of the data set loaded from spec, or spec.
func (c *Catalog) NameOf(spec string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if n, ok := c.specs[strings.TrimSpace(spec)]; ok {
		return n
	}
	return spec
}

// Get returns the named data set (a private one too) or nil.
func (c *Catalog) Get(name string) *Dataset {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if ds, ok := c.sets[name]; ok {
		return ds
	}
	return c.private[name]
}

// Names lists the data sets in the order they were added.
func (c *Catalog) Names() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Clone(c.names)
}

// Info describes every listed data set.
func (c *Catalog) Info() []Entry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]Entry, 0, len(c.names))
	for _, n := range c.names {
		out = append(out, EntryOf(c.sets[n]))
	}
	return out
}

// EntryOf describes ds for the page.
func EntryOf(ds *Dataset) Entry {
	r, q := ds.X.Dims()
	_, d := ds.Y.Dims()
	return Entry{Name: ds.Name, Description: ds.Description, Rows: r, Inputs: q, Outputs: d}
}
