package leasehold

import "testing"

func TestSSELinesSplitAcrossReads(t *testing.T) {
	stream := "retry: 2000\n\n: ping\n\nevent: applock.granted\ndata: {\"type\":\"applock.granted\",\"fence\":7}\r\n\r\nevent: record.saved\ndata: {\"version\":2}\n\n"
	var p sseParser
	var got []Event
	for i := 0; i < len(stream); i++ { // one byte a read
		got = append(got, p.feed([]byte{stream[i]})...)
	}
	if len(got) != 2 || got[0].Type != "applock.granted" || got[0].Data["fence"] != 7.0 || got[1].Type != "record.saved" {
		t.Fatalf("events: %+v", got)
	}
}
