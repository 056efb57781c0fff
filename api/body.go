package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"svcd/engine"
)

// readBody reads a request body up to maxBodyBytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, engine.Errorf(engine.KindTooLarge, "Request body too large (limit %d bytes)", maxBodyBytes)
		}
		return nil, engine.Errorf(engine.KindBadRequest, "Could not read the request body")
	}
	return b, nil
}

// decodeJSON reads a JSON object body into v.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	b, err := readBody(w, r)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return engine.Errorf(engine.KindBadRequest, "Invalid JSON body: %v", err)
	}
	return nil
}
