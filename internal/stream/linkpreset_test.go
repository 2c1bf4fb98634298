package stream
