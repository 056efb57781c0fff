package mail

import (
	"context"
	"encoding/json"
	"fmt"
	"net/mail"
	"net/url"
	"strings"
	"unicode/utf8"
)

// PostFunc sends one HTTP POST of body to url with the given request
// headers and returns the response status and (up to a limit the function
// chooses, a few KiB is plenty) the response body. The caller builds it
// around its SSRF-guarded *http.Client; see the package example. A
// transport failure is an error; a non-2xx status is not.
type PostFunc func(ctx context.Context, url string, header map[string]string, body []byte) (status int, respBody []byte, err error)

// HTTPConfig is the HTTP transport: settings mail.http.url and
// mail.http.api_key, plus the function that performs the request.
type HTTPConfig struct {
	URL    string
	APIKey string
	// Post performs the request; required.
	Post PostFunc
}

func (c HTTPConfig) check() error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%w: mail.http.url %q is not an http(s) URL", ErrInvalidConfig, c.URL)
	}
	if u.User != nil {
		return fmt.Errorf("%w: mail.http.url must not carry credentials (use mail.http.api_key)", ErrInvalidConfig)
	}
	if c.Post == nil {
		return fmt.Errorf("%w: HTTP transport without a Post function", ErrInvalidConfig)
	}
	return nil
}

// httpBody is the JSON document of the HTTP transport.
type httpBody struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Subject string `json:"subject"`
	Text    string `json:"text"`
	HTML    string `json:"html,omitempty"`
}

func (s *Sender) sendHTTP(ctx context.Context, to *mail.Address, m Message) error {
	body, err := json.Marshal(httpBody{
		From:    strings.TrimSpace(s.cfg.From),
		To:      to.Address,
		Subject: m.Subject,
		Text:    m.Text,
		HTML:    m.HTML,
	})
	if err != nil {
		return fmt.Errorf("mail http: encode: %w", err)
	}
	header := map[string]string{
		"Content-Type": "application/json",
		"Accept":       "application/json",
	}
	if s.cfg.HTTP.APIKey != "" {
		header["Authorization"] = "Bearer " + s.cfg.HTTP.APIKey
	}
	status, resp, err := s.cfg.HTTP.Post(ctx, s.cfg.HTTP.URL, header, body)
	if err != nil {
		return fmt.Errorf("mail http: post: %w", err)
	}
	if status < 200 || status > 299 {
		return fmt.Errorf("mail http: status %d: %s", status, snippet(resp))
	}
	return nil
}

// snippet is the start of a response body, made safe for a log line.
func snippet(b []byte) string {
	const limit = 200
	if len(b) > limit {
		b = b[:limit]
	}
	s := strings.ToValidUTF8(string(b), "")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}
