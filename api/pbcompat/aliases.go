package pbcompat

import (
	"encoding/json"
	"strings"

	"svcd/engine/schema"
)

// AliasesSetting holds other names of collections as a JSON object, alias
// → svcd name: the PocketBase ids (pbc_...) and names an import renamed,
// so that a client that kept them still reaches the collection (the
// importer, part F, writes it).
const AliasesSetting = "pocketbase.aliases"

// Coll resolves a collection named in a PocketBase path: by svcd name or
// id, else through pocketbase.aliases.
func (d *Deps) Coll(nameOrAlias string) (*schema.Collection, error) {
	c, err := d.Catalog.Collection(nameOrAlias)
	if err == nil && c != nil {
		return c, nil
	}
	if d.Settings != nil {
		if raw := strings.TrimSpace(d.Settings.Setting(AliasesSetting)); raw != "" {
			var aliases map[string]string
			if json.Unmarshal([]byte(raw), &aliases) == nil {
				if target, ok := aliases[nameOrAlias]; ok && target != nameOrAlias {
					if c, aerr := d.Catalog.Collection(target); aerr == nil && c != nil {
						return c, nil
					}
				}
			}
		}
	}
	if err == nil {
		err = NewError(404, "", nil)
	}
	return nil, err
}
