package fsm

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// SQL functions registered on every connection. They are pure Go, so the
// same functions serve SQL (list filters, rules checked at apply time) and
// the engine's in-memory evaluation of the filter language, and every
// replica computes the same values.

// GeoDistanceKm is the great-circle distance in kilometres between two
// points given as longitude and latitude in degrees (haversine, mean Earth
// radius 6371.0088 km).
func GeoDistanceKm(lonA, latA, lonB, latB float64) float64 {
	const r = 6371.0088
	rad := math.Pi / 180
	dLat := (latB - latA) * rad
	dLon := (lonB - lonA) * rad
	a := math.Sin(dLat/2)*math.Sin(dLat/2) +
		math.Cos(latA*rad)*math.Cos(latB*rad)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * r * math.Asin(math.Sqrt(math.Min(1, a)))
}

// GeoDistanceAny is GeoDistanceKm over values of any type: NULL unless all
// four are numbers (SQL functions receive int64, float64, string, []byte
// or nil).
func GeoDistanceAny(lonA, latA, lonB, latB any) any {
	var f [4]float64
	for i, v := range []any{lonA, latA, lonB, latB} {
		switch x := v.(type) {
		case int64:
			f[i] = float64(x)
		case float64:
			f[i] = x
		default:
			return nil
		}
	}
	d := GeoDistanceKm(f[0], f[1], f[2], f[3])
	if d != d {
		return nil
	}
	return d
}

// StrftimeVerbs are the conversions Strftime supports.
const StrftimeVerbs = "dHjmMSsuwWY%"

// Strftime formats unix seconds in UTC with SQLite's strftime conversions
// %d %H %j %m %M %S %s %u %w %W %Y and %%. Other text is copied.
func Strftime(format string, unix int64) (string, error) {
	t := time.Unix(unix, 0).UTC()
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(format) {
			return "", fmt.Errorf("strftime: trailing %%")
		}
		i++
		switch format[i] {
		case 'd':
			fmt.Fprintf(&b, "%02d", t.Day())
		case 'H':
			fmt.Fprintf(&b, "%02d", t.Hour())
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case 'm':
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case 'M':
			fmt.Fprintf(&b, "%02d", t.Minute())
		case 'S':
			fmt.Fprintf(&b, "%02d", t.Second())
		case 's':
			b.WriteString(strconv.FormatInt(unix, 10))
		case 'u':
			wd := int(t.Weekday())
			if wd == 0 {
				wd = 7
			}
			b.WriteString(strconv.Itoa(wd))
		case 'w':
			b.WriteString(strconv.Itoa(int(t.Weekday())))
		case 'W':
			// Week of the year, weeks starting on Monday (00-53).
			fmt.Fprintf(&b, "%02d", (t.YearDay()+6-(int(t.Weekday())+6)%7)/7)
		case 'Y':
			fmt.Fprintf(&b, "%04d", t.Year())
		case '%':
			b.WriteByte('%')
		default:
			return "", fmt.Errorf("strftime: unsupported conversion %%%c", format[i])
		}
	}
	return b.String(), nil
}

// registerFunctions installs the functions on a new connection.
func registerFunctions(c *sqlite3.SQLiteConn) error {
	if err := c.RegisterFunc("svc_geo_distance", GeoDistanceAny, true); err != nil {
		return err
	}
	return c.RegisterFunc("svc_strftime", func(format string, unix any) any {
		var secs int64
		switch x := unix.(type) {
		case int64:
			secs = x
		case float64:
			if x != x || math.IsInf(x, 0) {
				return nil
			}
			secs = int64(x)
		default:
			return nil
		}
		s, err := Strftime(format, secs)
		if err != nil {
			return nil
		}
		return s
	}, true)
}
