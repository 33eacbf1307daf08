"""llama.cpp RPC workers: other computers (or this one) lending their memory and processor to one model.

- ``worker``: the ``Worker`` value (host, port) and how an address the user typed is read
- ``protocol``: the few RPC commands the app sends itself (hello, device count, device memory), plain sockets
- ``check``: one worker checked (reachable, its protocol version, the memory it reports) as a value with sentences
- ``share``: "Share this computer as a worker": llama.cpp's ``rpc-server`` under the app's supervision

A worker runs whatever the computer that connects to it asks; it has no password (llama.cpp's README: never on
an open network). The app binds it to 127.0.0.1 unless the user picks another address, and says why.
"""
